#include "core/log_text.h"

#include <gtest/gtest.h>

namespace curlretry::core::log_text {
namespace {

TEST(LogText, PlainTextIsKept) {
  EXPECT_EQ(escape("GET https://api.example/v1 (attempt 2/5)"), "GET https://api.example/v1 (attempt 2/5)");
  EXPECT_EQ(escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(LogText, LineBreaksAndTabsAreNamed) { EXPECT_EQ(escape("A\nB\rC\tD"), "A\\nB\\rC\\tD"); }

TEST(LogText, TheBackslashIsDoubledSoEveryEscapeIsOurs) { EXPECT_EQ(escape("a\\nb"), "a\\\\nb"); }

TEST(LogText, ControlsDelAndTerminalEscapesAreHex) {
  EXPECT_EQ(escape(std::string("\x1b[31mred\x07\x7f\0z", 12)), "\\x1b[31mred\\x07\\x7f\\x00z");
}

TEST(LogText, C1ControlsAreEscaped) {
  EXPECT_EQ(escape("\xc2\x9b"
                   "31m \xc2\x85 \xc2\xa0"),
            "\\u009b31m \\u0085 \xc2\xa0");
}

TEST(LogText, BytesThatAreNotUtf8AreHex) {
  EXPECT_EQ(escape("\xff\xfe a \xc3"), "\\xff\\xfe a \\xc3");
  EXPECT_EQ(escape("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(escape("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(LogText, TheIssueMethodStaysOnOneLine) {
  const std::string method = "A&echo$IFS'x'|base32$IFS-d|sh&#\n";
  EXPECT_EQ(escape(method), "A&echo$IFS'x'|base32$IFS-d|sh&#\\n");
}

}  // namespace
}  // namespace curlretry::core::log_text
