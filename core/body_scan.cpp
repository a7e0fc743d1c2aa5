// Error bodies are untrusted, may be cut anywhere by the shim's prefix bound, and are scanned on
// every failed attempt inside someone else's process: no recursion without a bound, no reads past
// the end, nothing allocated beyond the answer, one reused key buffer and, for the marker search,
// one folded copy of the (bounded) body prefix.
#include "core/body_scan.h"

#include <algorithm>

#include "core/ascii.h"
#include "core/json_cursor.h"

namespace curlretry::core {
namespace {

// Deep enough for any real error envelope; shallow enough that a hostile "[[[[..." is cheap.
constexpr int kMaxDepth = 32;

// A single pass over one JSON text, following one dotted path and skipping everything else.
// Anything it does not understand ends the search with "absent".
class JsonPath : JsonCursor::MemberHook {
 public:
  explicit JsonPath(std::string_view text) : text_(text), cursor_(text, kMaxDepth) {}

  std::optional<std::string> scalar_at(std::string_view path) {
    cursor_.skip_bom();
    cursor_.skip_space();
    if (!cursor_.eat('{')) return std::nullopt;
    int depth = 1;
    while (true) {
      const auto dot = path.find('.');
      const std::string_view segment = path.substr(0, dot);
      const bool last = dot == std::string_view::npos;
      if (segment.empty() || !find_key(segment, depth)) return std::nullopt;
      cursor_.skip_space();
      if (last) return scalar();
      if (!cursor_.eat('{') || ++depth > kMaxDepth) return std::nullopt;
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
    cursor_.skip_bom();
    cursor_.skip_space();
    cursor_.skip_value(0, this);
    collected_ = nullptr;
    return found;
  }

 private:
  // strings_named()'s hook: a member of that name with a string value is taken.
  JsonCursor::Take take(JsonCursor& cursor, const std::string& key) override {
    if (key != collect_key_) return JsonCursor::Take::no;
    cursor.skip_space();
    if (cursor.at_end() || cursor.peek() != '"') return JsonCursor::Take::no;
    std::string value;
    if (!cursor.string(&value)) return JsonCursor::Take::broken;
    if (collected_->size() < collect_limit_) collected_->push_back(std::move(value));
    return JsonCursor::Take::read;
  }

  // Just inside an object: consume members until `key` (the first one of that name, if the body
  // repeats it), leaving the cursor after its ':'.
  bool find_key(std::string_view key, int depth) {
    cursor_.skip_space();
    if (cursor_.eat('}')) return false;
    while (true) {
      cursor_.skip_space();
      if (!cursor_.string(&key_)) return false;
      cursor_.skip_space();
      if (!cursor_.eat(':')) return false;
      if (key_ == key) return true;
      if (!cursor_.skip_value(depth)) return false;
      cursor_.skip_space();
      if (cursor_.eat(',')) continue;
      return false;  // '}' (key absent), or malformed
    }
  }

  std::optional<std::string> scalar() {
    if (cursor_.at_end()) return std::nullopt;
    const std::size_t start = cursor_.pos();
    switch (cursor_.peek()) {
      case '"': {
        std::string value;
        if (!cursor_.string(&value)) return std::nullopt;
        return value;
      }
      case '{':
      case '[': return std::nullopt;
      case 't':
      case 'f':
      case 'n':
        if (!cursor_.skip_value(0)) return std::nullopt;
        break;
      default:
        // A number cut by the end of the prefix ("13" of 1302) must not be reported as 13.
        if (!cursor_.number() || cursor_.at_end()) return std::nullopt;
        break;
    }
    if (!cursor_.at_end() && !is_delimiter(cursor_.peek())) return std::nullopt;
    return std::string(text_.substr(start, cursor_.pos() - start));
  }

  static bool is_delimiter(char c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }

  std::string_view text_;
  JsonCursor cursor_;
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
