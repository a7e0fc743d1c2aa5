// The one ASCII case-folding module: only A-Z fold, every other byte (UTF-8 included) stays.
#include "core/ascii.h"

#include <gtest/gtest.h>

namespace curlretry::core::ascii {
namespace {

TEST(Ascii, FoldsOnlyAsciiLetters) {
  EXPECT_EQ(lower("Retry-After: 5"), "retry-after: 5");
  EXPECT_EQ(upper("post"), "POST");
  EXPECT_EQ(lower("\xC3\x84\xC4\xB0"), "\xC3\x84\xC4\xB0");  // "ÄI-dot" unchanged: bytes >= 0x80 pass
  EXPECT_EQ(lower('@'), '@');
  EXPECT_EQ(lower('['), '[');
  EXPECT_EQ(upper('`'), '`');
  EXPECT_EQ(upper('{'), '{');
}

TEST(Ascii, DigitsAndHexDigits) {
  EXPECT_TRUE(only_digits("0123456789"));
  EXPECT_TRUE(only_digits(""));  // vacuously: a caller that needs a digit checks for one
  EXPECT_FALSE(only_digits("12a"));
  EXPECT_FALSE(only_digits("-1"));
  EXPECT_FALSE(is_digit('\xB2'));  // a superscript two's Latin-1 byte: no locale can make it one
  const std::string hex = "0123456789abcdefABCDEF";
  for (std::size_t i = 0; i < hex.size(); ++i) EXPECT_EQ(hex_digit(hex[i]), i < 16 ? int(i) : int(i) - 6) << hex[i];
  for (char c : {'g', 'G', '/', ':', '@', '`', '\0', '\xC1', ' '}) EXPECT_EQ(hex_digit(c), -1) << int(c);
}

TEST(Ascii, ComparesIgnoringCase) {
  EXPECT_TRUE(iequals("Content-Type", "content-TYPE"));
  EXPECT_FALSE(iequals("Content-Type", "Content-Typ"));
  EXPECT_FALSE(iequals("\xC3\x84", "\xC3\xA4"));  // Ä vs ä: not ASCII, not folded
  EXPECT_TRUE(istarts_with("Text/Event-Stream; charset=utf-8", "text/event-stream"));
  EXPECT_FALSE(istarts_with("text", "text/event-stream"));
  EXPECT_TRUE(istarts_with("anything", ""));
  static_assert(iequals("ABC", "abc"), "usable at compile time");
}

TEST(Ascii, TrimsSpaceTabCrLf) {
  EXPECT_EQ(trim(" \t 5 \r\n"), "5");
  EXPECT_EQ(trim(" \r\n"), "");
  EXPECT_EQ(trim("a b"), "a b");
  EXPECT_EQ(trim("\n5\n"), "5");
}

TEST(Ascii, StripsOnlyTheBytesAsked) {
  EXPECT_EQ(strip_leading(" \t\r\nx \r\n"), "x \r\n");
  EXPECT_EQ(strip_trailing(" x \t\r\n"), " x");
  EXPECT_EQ(strip_leading("\r\n x", kBlanks), "\r\n x");
  EXPECT_EQ(strip_trailing("x\r\n", kBlanks), "x\r\n");
  EXPECT_EQ(strip_leading("   "), "");
  EXPECT_EQ(strip_trailing("   "), "");
  EXPECT_EQ(strip_leading(""), "");
  static_assert(strip_trailing("a ") == "a", "usable at compile time");
}

TEST(Ascii, FieldValueIsOwsBeforeAndOwsOrLineEndAfter) {
  EXPECT_EQ(field_value(" \t 5 \t\r\n"), "5");
  EXPECT_EQ(field_value("\n5"), "\n5");  // a line end before the value is not blank: kept, so it fails to parse
  EXPECT_EQ(field_value("\r\n"), "");
  EXPECT_EQ(field_value(" a b "), "a b");
}

}  // namespace
}  // namespace curlretry::core::ascii
