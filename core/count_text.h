// A count and its noun as a person reads it in a message: "1 attempt", "3 attempts",
// "2 processes". The one place the singular is chosen, so that every line says it the same way.
#pragma once

#include <string>
#include <string_view>

namespace curlretry::core {

inline std::string counted(long long n, std::string_view one, std::string_view many) {
  std::string out = std::to_string(n);
  out += ' ';
  out += n == 1 ? one : many;
  return out;
}

}  // namespace curlretry::core
