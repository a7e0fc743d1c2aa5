#include "upstream/http_request.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "core/ascii.h"
#include "upstream/fail.h"

namespace curlretry::upstream {
namespace {

constexpr std::size_t kMaxHead = 64 * 1024;
constexpr std::size_t kMaxHeaders = 100;
constexpr std::size_t kMaxChunkLine = 1024;

using core::ascii::field_value;
using core::ascii::iequals;

// Does a comma-separated header value hold `token` (case-insensitive)?
bool has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    auto comma = value.find(',');
    if (iequals(field_value(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::string_view path_of(std::string_view target) {
  // Absolute form (a client that thinks we are a proxy): keep only the path.
  if (auto scheme = target.find("://"); scheme != std::string_view::npos && target.front() != '/') {
    auto slash = target.find('/', scheme + 3);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  return target.substr(0, target.find_first_of("?#"));
}

bool apply_framing(Request& r, std::string* error) {
  bool have_length = false;
  for (const auto& [name, value] : r.headers) {
    if (iequals(name, "content-length")) {
      std::uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || end != value.data() + value.size() || (have_length && n != r.content_length)) {
        return fail(error, "bad Content-Length");
      }
      r.content_length = n;
      have_length = true;
    } else if (iequals(name, "transfer-encoding")) {
      r.chunked = has_token(value, "chunked");
      if (!r.chunked) return fail(error, "unsupported Transfer-Encoding");
    } else if (iequals(name, "expect")) {
      r.expect_continue = iequals(field_value(value), "100-continue");
    } else if (iequals(name, "connection") && has_token(value, "close")) {
      r.keep_alive = false;
    }
  }
  if (r.chunked) r.content_length = 0;  // chunked framing wins over a Content-Length (RFC 9112)
  return true;
}

std::optional<std::uint64_t> chunk_size(std::string_view line) {
  line = field_value(line.substr(0, line.find(';')));  // chunk extensions are ignored
  if (line.empty() || line.size() > 15) return std::nullopt;
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), n, 16);
  if (ec != std::errc{} || end != line.data() + line.size()) return std::nullopt;
  return n;
}

bool read_exact(Stream& stream, std::uint64_t n, const std::function<void(std::string_view)>& sink) {
  char buffer[64 * 1024];
  while (n > 0) {
    std::size_t got = stream.read_some(buffer, static_cast<std::size_t>(std::min<std::uint64_t>(n, sizeof buffer)));
    if (got == 0) return false;
    sink(std::string_view(buffer, got));
    n -= got;
  }
  return true;
}

bool read_chunked(Stream& stream, const std::function<void(std::string_view)>& sink) {
  for (;;) {
    std::string line;
    if (!stream.read_line(line, kMaxChunkLine)) return false;
    auto size = chunk_size(line);
    if (!size) return false;
    if (*size == 0) break;
    if (!read_exact(stream, *size, sink)) return false;
    std::string crlf;
    if (!stream.read_line(crlf, 2) || field_value(crlf) != "") return false;
  }
  // Trailer fields, up to the blank line.
  for (std::size_t total = 0;;) {
    std::string line;
    if (!stream.read_line(line, kMaxHead)) return false;
    total += line.size();
    if (total > kMaxHead) return false;
    if (line == "\r\n" || line == "\n") return true;
  }
}

}  // namespace

std::string_view Request::header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (iequals(n, name)) return v;
  }
  return {};
}

bool parse_head(std::string_view head, Request& r, std::string* error) {
  auto next_line = [&head]() {
    auto nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };

  std::string_view request_line = next_line();
  auto sp1 = request_line.find(' ');
  auto sp2 = request_line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return fail(error, "malformed request line");
  r.method = std::string(request_line.substr(0, sp1));
  r.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
  std::string_view version = request_line.substr(sp2 + 1);
  if (r.method.empty() || r.target.empty()) return fail(error, "malformed request line");
  if (version == "HTTP/1.0") {
    r.keep_alive = false;  // simpler than honouring 1.0 keep-alive, and no client needs it
  } else if (version != "HTTP/1.1") {
    return fail(error, "unsupported HTTP version");
  }
  r.path = std::string(path_of(r.target));

  while (!head.empty()) {
    std::string_view line = next_line();
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') return fail(error, "obsolete line folding");
    auto colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) return fail(error, "malformed header");
    if (r.headers.size() == kMaxHeaders) return fail(error, "too many headers");
    r.headers.emplace_back(std::string(line.substr(0, colon)), std::string(field_value(line.substr(colon + 1))));
  }
  return apply_framing(r, error);
}

HeadResult read_head(Stream& stream, Request& request, std::string* error) {
  std::string head;
  for (;;) {
    std::size_t before = head.size();
    if (!stream.read_line(head, kMaxHead)) {
      if (head.empty()) return HeadResult::closed;
      if (error) *error = "incomplete or oversized request head";
      return HeadResult::malformed;
    }
    std::string_view line(head.data() + before, head.size() - before);
    bool blank = line == "\r\n" || line == "\n";
    if (blank && before == 0) {
      head.clear();  // RFC 9112 §2.2: ignore empty lines before the request line
      continue;
    }
    if (blank) break;
  }
  return parse_head(head, request, error) ? HeadResult::ok : HeadResult::malformed;
}

bool read_body(Stream& stream, const Request& request,
               const std::function<void(std::string_view)>& sink) {
  if (request.chunked) return read_chunked(stream, sink);
  return read_exact(stream, request.content_length, sink);
}

}  // namespace curlretry::upstream
