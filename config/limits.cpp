#include "config/limits.h"

#include <charconv>

namespace curlretry::config {

ParsedInteger parse_integer(std::string_view text) {
  ParsedInteger out;
  std::string_view digits = text;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) digits.remove_prefix(1);
  if (digits.empty()) return out;
  for (const char c : digits) {
    if (c < '0' || c > '9') return out;
  }
  // from_chars refuses a leading '+'.
  const char* first = text.data() + (text.front() == '+' ? 1 : 0);
  long long value = 0;
  const auto [end, ec] = std::from_chars(first, text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    out.overflow = true;
    return out;
  }
  if (ec != std::errc() || end != text.data() + text.size()) return out;
  out.value = value;
  return out;
}

}  // namespace curlretry::config
