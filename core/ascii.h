// ASCII case folding and comparison: the one definition for every header name, scheme, host,
// marker and keyword in curlretry. Locale-independent on purpose: std::tolower follows the host
// program's locale (a Turkish locale folds 'I' to a dotless i), and inside someone else's process
// the meaning of "Retry-After" must not depend on setlocale(). Bytes >= 0x80 pass unchanged, so
// UTF-8 text compares byte for byte.
#pragma once

#include <string>
#include <string_view>

namespace curlretry::core::ascii {

constexpr char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

constexpr bool iequals(char a, char b) { return lower(a) == lower(b); }

constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!iequals(a[i], b[i])) return false;
  }
  return true;
}

constexpr bool istarts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

std::string lower(std::string_view text);
std::string upper(std::string_view text);

// Without leading and trailing spaces, tabs, CRs and LFs (header values, Retry-After, dates).
std::string_view trim(std::string_view text);

}  // namespace curlretry::core::ascii
