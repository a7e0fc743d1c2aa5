// Error bodies are untrusted, may be cut anywhere by the shim's prefix bound, and are scanned on
// every failed attempt inside someone else's process: no recursion without a bound, no reads past
// the end, nothing allocated beyond the answer, one reused key buffer and, for the marker search,
// one folded copy of the (bounded) body prefix.
#include "core/body_scan.h"

#include <algorithm>
#include <cstdint>

#include "core/ascii.h"
#include "core/utf8.h"

namespace curlretry::core {
namespace {

// Deep enough for any real error envelope; shallow enough that a hostile "[[[[..." is cheap.
constexpr int kMaxDepth = 32;

// A single pass over one JSON text, following one dotted path and skipping everything else.
// Anything it does not understand ends the search with "absent".
class JsonPath {
 public:
  explicit JsonPath(std::string_view text) : text_(text) {}

  std::optional<std::string> scalar_at(std::string_view path) {
    skip_bom();
    skip_space();
    if (!eat('{')) return std::nullopt;
    int depth = 1;
    while (true) {
      const auto dot = path.find('.');
      const std::string_view segment = path.substr(0, dot);
      const bool last = dot == std::string_view::npos;
      if (segment.empty() || !find_key(segment, depth)) return std::nullopt;
      skip_space();
      if (last) return scalar();
      if (!eat('{') || ++depth > kMaxDepth) return std::nullopt;
      path.remove_prefix(dot + 1);
    }
  }

  // Every string value of a member named `key`, at any depth, in document order, at most
  // `limit` of them. A body cut short keeps what was found before the cut.
  std::vector<std::string> strings_named(std::string_view key, std::size_t limit) {
    std::vector<std::string> found;
    collect_key_ = key;
    collected_ = &found;
    collect_limit_ = limit;
    skip_bom();
    skip_space();
    skip_value(0);
    collected_ = nullptr;
    return found;
  }

 private:
  // Just inside an object: consume members until `key` (the first one of that name, if the body
  // repeats it), leaving the cursor after its ':'.
  bool find_key(std::string_view key, int depth) {
    skip_space();
    if (eat('}')) return false;
    while (true) {
      skip_space();
      if (!string(&key_)) return false;
      skip_space();
      if (!eat(':')) return false;
      if (key_ == key) return true;
      if (!skip_value(depth)) return false;
      skip_space();
      if (eat(',')) continue;
      return false;  // '}' (key absent), or malformed
    }
  }

  bool skip_value(int depth) {
    skip_space();
    if (at_end()) return false;
    switch (peek()) {
      case '"': return string(nullptr);
      case '{': return skip_container('}', depth, true);
      case '[': return skip_container(']', depth, false);
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  bool skip_container(char close, int depth, bool object) {
    if (depth + 1 > kMaxDepth) return false;
    ++pos_;
    skip_space();
    if (eat(close)) return true;
    while (true) {
      skip_space();
      bool taken = false;
      if (object) {
        if (!string(collected_ ? &key_ : nullptr)) return false;
        skip_space();
        if (!eat(':')) return false;
        if (collected_ && key_ == collect_key_) {
          skip_space();
          if (!at_end() && peek() == '"') {
            std::string value;
            if (!string(&value)) return false;
            if (collected_->size() < collect_limit_) collected_->push_back(std::move(value));
            taken = true;
          }
        }
      }
      if (!taken && !skip_value(depth + 1)) return false;
      skip_space();
      if (eat(close)) return true;
      if (!eat(',')) return false;
    }
  }

  std::optional<std::string> scalar() {
    if (at_end()) return std::nullopt;
    const std::size_t start = pos_;
    switch (peek()) {
      case '"': {
        std::string value;
        if (!string(&value)) return std::nullopt;
        return value;
      }
      case '{':
      case '[': return std::nullopt;
      case 't':
      case 'f':
      case 'n':
        if (!skip_value(0)) return std::nullopt;
        break;
      default:
        // A number cut by the end of the prefix ("13" of 1302) must not be reported as 13.
        if (!number() || at_end()) return std::nullopt;
        break;
    }
    if (!at_end() && !is_delimiter(peek())) return std::nullopt;
    return std::string(text_.substr(start, pos_ - start));
  }

  // Reads a string at the cursor; unescapes it into `out` unless `out` is null.
  bool string(std::string* out) {
    if (!eat('"')) return false;
    if (out) out->clear();
    while (!at_end()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out) *out += c;
        continue;
      }
      if (at_end()) return false;
      const char e = text_[pos_++];
      char plain = 0;
      switch (e) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': {
          const auto cp = code_point();
          if (!cp) return false;
          if (out) utf8::append(*out, *cp);
          continue;
        }
        default: return false;
      }
      if (out) *out += plain;
    }
    return false;  // unterminated: truncated body
  }

  // After "\u": one code point, joining a surrogate pair. A lone surrogate is legal JSON but
  // not a character; it becomes U+FFFD rather than invalid UTF-8.
  std::optional<std::uint32_t> code_point() {
    const auto high = hex4();
    if (!high) return std::nullopt;
    if (*high < 0xD800 || *high > 0xDFFF) return *high;
    if (*high <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
      const std::size_t mark = pos_;
      pos_ += 2;
      const auto low = hex4();
      if (low && *low >= 0xDC00 && *low <= 0xDFFF) return 0x10000 + ((*high - 0xD800) << 10) + (*low - 0xDC00);
      pos_ = mark;  // not a pair: the next escape is read on its own
    }
    return 0xFFFD;
  }

  std::optional<std::uint32_t> hex4() {
    if (text_.size() - pos_ < 4) return std::nullopt;
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      std::uint32_t digit = 0;
      if (c >= '0' && c <= '9')
        digit = static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      else
        return std::nullopt;
      value = value * 16 + digit;
    }
    return value;
  }

  // RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number() {
    eat('-');
    if (eat('0')) {
      // no leading zeros
    } else if (!digits()) {
      return false;
    }
    if (eat('.') && !digits()) return false;
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    return true;
  }

  bool digits() {
    const std::size_t start = pos_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    return pos_ > start;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  static bool is_delimiter(char c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }

  void skip_bom() {
    if (text_.substr(pos_, 3) == "\xEF\xBB\xBF") pos_ += 3;
  }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  bool eat(char c) {
    if (at_end() || peek() != c) return false;
    ++pos_;
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string key_;  // reused across keys: one allocation per scan at most
  // strings_named()'s search, while it runs.
  std::string_view collect_key_;
  std::vector<std::string>* collected_ = nullptr;
  std::size_t collect_limit_ = 0;
};

}  // namespace

std::optional<std::string_view> find_marker(std::string_view body, const std::vector<std::string>& markers) {
  // Folded once, then each marker is a plain substring search (memchr-driven) instead of a
  // byte-by-byte folding comparison per marker.
  std::string folded(body.size(), '\0');
  std::transform(body.begin(), body.end(), folded.begin(), [](char c) { return ascii::lower(c); });
  std::string needle;
  for (const std::string& marker : markers) {
    // An empty marker (a stray "" in a config list) would match every body.
    if (marker.empty() || marker.size() > folded.size()) continue;
    needle.resize(marker.size());
    std::transform(marker.begin(), marker.end(), needle.begin(), [](char c) { return ascii::lower(c); });
    if (folded.find(needle) != std::string::npos) return std::string_view{marker};
  }
  return std::nullopt;
}

std::optional<std::string> json_scalar_at(std::string_view body, std::string_view path) {
  if (path.empty()) return std::nullopt;
  return JsonPath(body).scalar_at(path);
}

std::vector<std::string> json_strings_named(std::string_view body, std::string_view key, std::size_t limit) {
  if (key.empty() || limit == 0) return {};
  return JsonPath(body).strings_named(key, limit);
}

}  // namespace curlretry::core
