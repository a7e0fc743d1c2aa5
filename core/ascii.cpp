#include "core/ascii.h"

namespace curlretry::core::ascii {

namespace {

std::string each(std::string_view text, char (*fold)(char)) {
  std::string out(text);
  for (char& c : out) c = fold(c);
  return out;
}

}  // namespace

std::string lower(std::string_view text) { return each(text, lower); }
std::string upper(std::string_view text) { return each(text, upper); }

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace curlretry::core::ascii
