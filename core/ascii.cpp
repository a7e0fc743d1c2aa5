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

}  // namespace curlretry::core::ascii
