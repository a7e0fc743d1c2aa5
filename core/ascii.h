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

// '0'-'9' only: std::isdigit follows the locale too, and takes an int a negative char breaks.
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
// The value of a hexadecimal digit (either case), or -1: JSON's \uXXXX and URL percent-escapes.
constexpr int hex_digit(char c) {
  if (is_digit(c)) return c - '0';
  const char l = lower(c);
  return l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}
// Every byte a digit; true for an empty text (a caller that needs a digit checks for one).
constexpr bool only_digits(std::string_view text) {
  for (char c : text) {
    if (!is_digit(c)) return false;
  }
  return true;
}

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

// Trimming, with the set of bytes always said: kBlanks is HTTP's optional whitespace (RFC 9110
// OWS); kSpaces adds the CR and LF a line read with its end still holds.
inline constexpr std::string_view kBlanks = " \t";
inline constexpr std::string_view kSpaces = " \t\r\n";

constexpr std::string_view strip_leading(std::string_view text, std::string_view bytes = kSpaces) {
  const auto first = text.find_first_not_of(bytes);
  return first == std::string_view::npos ? std::string_view() : text.substr(first);
}
constexpr std::string_view strip_trailing(std::string_view text, std::string_view bytes = kSpaces) {
  const auto last = text.find_last_not_of(bytes);
  return last == std::string_view::npos ? std::string_view() : text.substr(0, last + 1);
}

// A field value as a header line or an env variable holds it: OWS before, OWS and the line's
// end after. (A CR or LF before the value is kept: it makes a malformed value, not a blank.)
constexpr std::string_view field_value(std::string_view text) {
  return strip_trailing(strip_leading(text, kBlanks));
}

// Without any space, tab, CR or LF at either end (Retry-After, dates, cooldown values).
constexpr std::string_view trim(std::string_view text) { return strip_trailing(strip_leading(text)); }

}  // namespace curlretry::core::ascii
