// The one JSON string escaper (core/json_text.h): exact bytes for every class of input.
#include "core/json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace curlretry::core::json_text {
namespace {

TEST(JsonText, EscapesQuoteBackslashAndTheShortControls) {
  EXPECT_EQ(quote("plain"), "\"plain\"");
  EXPECT_EQ(quote(""), "\"\"");
  EXPECT_EQ(quote("a\"b\\c\nd\re\tf"), "\"a\\\"b\\\\c\\nd\\re\\tf\"");
  EXPECT_EQ(quote("/"), "\"/\"");  // '/' needs no escape
}

TEST(JsonText, OtherControlsAndDelAsLowerCaseU00xx) {
  EXPECT_EQ(quote(std::string("\x00\x01\x08\x0c\x1b\x1f\x7f", 7)),
            "\"\\u0000\\u0001\\u0008\\u000c\\u001b\\u001f\\u007f\"");
}

TEST(JsonText, KeepsWellFormedUtf8AndC1AsTheyAre) {
  EXPECT_EQ(quote("\xE9\xA3\x8E\xE6\x8E\xA7"), "\"\xE9\xA3\x8E\xE6\x8E\xA7\"");  // 风控
  EXPECT_EQ(quote("\xF0\x9F\x98\x80"), "\"\xF0\x9F\x98\x80\"");              // U+1F600
  EXPECT_EQ(quote("\xC2\x9B"), "\"\xC2\x9B\"");                              // U+009B kept (UTF-8)
}

TEST(JsonText, EachBadByteBecomesOneReplacementCharacter) {
  EXPECT_EQ(quote("bad\xff"), "\"bad\xEF\xBF\xBD\"");
  EXPECT_EQ(quote("\xe9t\xc3"), "\"\xEF\xBF\xBDt\xEF\xBF\xBD\"");
  EXPECT_EQ(quote("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong '/'
  EXPECT_EQ(quote("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // a surrogate
}

TEST(JsonText, PiecesSayHowMuchInputTheyTook) {
  const Piece four = piece_at("\xF0\x9F\x98\x80!", 0);
  EXPECT_EQ(std::string(four.bytes, four.size), "\xF0\x9F\x98\x80");
  EXPECT_EQ(four.consumed, 4);
  const Piece control = piece_at("\x1f", 0);
  EXPECT_EQ(std::string(control.bytes, control.size), "\\u001f");
  EXPECT_EQ(control.consumed, 1);
  const Piece bad = piece_at("\xF0\x9F", 0);  // cut inside a sequence
  EXPECT_EQ(std::string(bad.bytes, bad.size), "\xEF\xBF\xBD");
  EXPECT_EQ(bad.consumed, 1);
}

TEST(JsonText, AppendsWithoutQuotes) {
  std::string out = "x=";
  append_escaped(out, "\"1\"");
  EXPECT_EQ(out, "x=\\\"1\\\"");
}

}  // namespace
}  // namespace curlretry::core::json_text
