// Reads one flat JSON object (a line of the attempt log): string and number members by name;
// true/false/null and nested values are checked for shape and skipped. The one reader behind
// `curlretry stats` and the tests that read what the attempt-log writer wrote. Strict where it
// matters for trust: raw control bytes inside strings, bad escapes and trailing bytes after the
// object make the whole line unreadable (nullopt); a lone surrogate escape becomes U+FFFD.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace curlretry::core::json {

struct Value {
  enum class Kind { string, number, other } kind = Kind::other;
  std::string text;  // unescaped UTF-8 when `kind` is string
  double number = 0;
};

using Object = std::map<std::string, Value>;

// A repeated member keeps its last value, as most JSON readers do.
std::optional<Object> read_object(std::string_view text);

// The member's string, or nullptr when absent or not a string.
const std::string* string_member(const Object& object, std::string_view name);
// The member's number, or nullopt when absent or not a number.
std::optional<double> number_member(const Object& object, std::string_view name);

}  // namespace curlretry::core::json
