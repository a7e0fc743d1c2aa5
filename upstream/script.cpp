#include "upstream/script.h"

#include <charconv>

#include "core/ascii.h"
#include "upstream/fail.h"
#include "upstream/sse_scripts.h"

namespace curlretry::upstream {
namespace {

// Bounds keep a mistyped script from tying a test up for hours or eating memory.
constexpr std::uint64_t kMaxHangMs = 600'000;
constexpr std::uint64_t kMaxEvents = 100'000;
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{1} << 20;

constexpr std::string_view kCaptchaBody = R"({"code":3007,"msg":"captcha verify failed"})";
constexpr std::string_view kQuotaBody =
    R"({"error":{"code":"1113","message":"You have exceeded your daily quota"}})";
constexpr std::string_view kZai1302Body = R"({"error":{"code":"1302","message":"High concurrency"}})";

std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t max) {
  std::uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

// A header value must not smuggle in CR/LF or other controls.
bool printable(std::string_view value) {
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// `<prefix><digits>`, e.g. hang250 -> 250.
std::optional<std::uint64_t> suffix_number(std::string_view base, std::string_view prefix,
                                           std::uint64_t max) {
  if (!base.starts_with(prefix)) return std::nullopt;
  return parse_number(base.substr(prefix.size()), max);
}

bool parse_base(std::string_view base, Step& step, std::string* error) {
  auto named_body = [&](int status, std::string_view body) {
    step.status = status;
    step.body = std::string(body);
    return true;
  };
  if (auto sse = parse_sse_script(base, step, error)) return *sse;
  if (base == "captcha") return named_body(400, kCaptchaBody);
  if (base == "quota") return named_body(429, kQuotaBody);
  if (base == "zai1302") return named_body(429, kZai1302Body);
  struct Named {
    std::string_view name;
    StepKind kind;
  };
  for (const Named& n : {Named{"reset", StepKind::reset}, Named{"close", StepKind::close},
                         Named{"echo", StepKind::echo}, Named{"early503", StepKind::early503},
                         Named{"raw", StepKind::raw}}) {
    if (base != n.name) continue;
    step.kind = n.kind;
    if (n.kind == StepKind::early503) step.status = 503;
    return true;
  }

  struct Counted {
    std::string_view prefix;
    StepKind kind;
    std::uint64_t max;
  };
  for (const Counted& c : {Counted{"hang", StepKind::hang, kMaxHangMs},
                           Counted{"sse", StepKind::sse, kMaxEvents},
                           Counted{"break", StepKind::break_body, kMaxBytes}}) {
    if (!base.starts_with(c.prefix)) continue;
    auto n = suffix_number(base, c.prefix, c.max);
    if (!n) {
      return fail(error, "step '" + std::string(base) + "': " + std::string(c.prefix) +
                             " wants a number up to " + std::to_string(c.max));
    }
    step.kind = c.kind;
    step.number = *n;
    return true;
  }

  auto status = parse_number(base, 599);
  if (base.size() != 3 || !status || *status < 200) {
    return fail(error, "unknown step '" + std::string(base) +
                           "' (a status 200-599 or captcha, quota, zai1302, reset, close, echo, "
                           "early503, raw, hangN, sseN, breakN)");
  }
  step.status = static_cast<int>(*status);
  return true;
}

bool parse_modifier(std::string_view raw, Step& step, std::string* error) {
  auto eq = raw.find('=');
  std::string_view name = raw.substr(0, eq);
  if (name == "close" && eq == std::string_view::npos) {
    step.close_after = true;
    return true;
  }
  if (eq == std::string_view::npos) return fail(error, "modifier '+" + std::string(raw) + "' wants =value");

  if (name == "data") {
    // Any bytes at all (CR, LF, NUL...): they are the response, not a header value.
    auto bytes = percent_decode(raw.substr(eq + 1));
    if (!bytes || bytes->empty()) return fail(error, "+data wants percent-encoded bytes");
    step.raw_data = std::move(*bytes);
    return true;
  }
  auto value = percent_decode(raw.substr(eq + 1));
  if (!value || !printable(*value)) {
    return fail(error, "modifier '+" + std::string(name) + "' has a malformed value");
  }
  auto number = [&](std::uint64_t max) { return parse_number(*value, max); };

  // Text-valued modifiers: each names the field of the step it fills.
  struct Text {
    std::string_view name;
    std::optional<std::string> Step::*field;
  };
  for (const Text& t : {Text{"ra", &Step::retry_after}, Text{"ram", &Step::retry_after_ms},
                        Text{"xsr", &Step::should_retry}, Text{"ct", &Step::content_type},
                        Text{"loc", &Step::location}}) {
    if (name != t.name) continue;
    step.*t.field = *value;
    return true;
  }
  if (name == "radate") {
    auto seconds = number(10 * 365 * 86400ull);
    if (!seconds) return fail(error, "+radate wants whole seconds from now");
    step.retry_after_in = static_cast<std::int64_t>(*seconds);
    return true;
  }
  if (name == "len") {
    step.length = number(kMaxBytes);
    if (!step.length) return fail(error, "+len wants a byte count up to 1 GiB");
    return true;
  }
  if (name == "hdr") {
    step.header_padding = number(kMaxHeaderBytes);
    if (!step.header_padding) return fail(error, "+hdr wants a byte count up to 1 MiB");
    return true;
  }
  if (name == "split" || name == "cut") {
    auto n = number(1 << 20);
    if (!n || (name == "split" && *n == 0)) return fail(error, "+" + std::string(name) + " wants a byte count");
    (name == "split" ? step.sse_split : step.sse_cut) = n;
    return true;
  }
  if (name == "eol") {
    if (*value != "lf" && *value != "crlf" && *value != "cr") return fail(error, "+eol wants lf, crlf or cr");
    step.sse_eol = *value == "crlf" ? "\r\n" : *value == "cr" ? "\r" : "";
    return true;
  }
  if (name == "pad") {
    step.body_padding = number(kMaxBytes);
    if (!step.body_padding) return fail(error, "+pad wants a byte count up to 1 GiB");
    return true;
  }
  return fail(error, "unknown modifier '+" + std::string(name) +
                         "' (ra, radate, ram, xsr, len, ct, loc, close, hdr, pad, data, split, cut, eol)");
}

}  // namespace

const Step& Script::at(std::uint64_t attempt) const {
  if (attempt == 0) attempt = 1;
  return attempt > steps.size() ? steps.back() : steps[attempt - 1];
}

std::optional<Step> parse_step(std::string_view text, std::string* error) {
  Step step;
  step.text = std::string(text);
  auto parts = split(text, '+');
  if (!parse_base(parts.front(), step, error)) return std::nullopt;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (!parse_modifier(parts[i], step, error)) return std::nullopt;
  }
  if (step.kind != StepKind::sse_script && (step.sse_split || step.sse_cut || !step.sse_eol.empty())) {
    fail(error, "step '" + std::string(text) + "': +split, +cut and +eol go with sse-<name> steps");
    return std::nullopt;
  }
  if ((step.kind == StepKind::raw) != step.raw_data.has_value()) {
    fail(error, "step '" + std::string(text) + "': raw and +data= go together (raw+data=<bytes>)");
    return std::nullopt;
  }
  return step;
}

std::optional<Script> parse_script(std::string_view text, std::string* error) {
  Script script;
  for (std::string_view part : split(text, ',')) {
    auto step = parse_step(part, error);
    if (!step) return std::nullopt;
    script.steps.push_back(std::move(*step));
  }
  return script;
}

bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > 200) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '~' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int hi = i + 1 < text.size() ? core::ascii::hex_digit(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? core::ascii::hex_digit(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace curlretry::upstream
