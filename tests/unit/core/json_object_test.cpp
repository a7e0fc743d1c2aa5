// The one reader of attempt-log lines (core/json_object.h).
#include "core/json_object.h"

#include <gtest/gtest.h>

#include "core/attempt_log.h"
#include "core/json_text.h"

namespace curlretry::core::json {
namespace {

TEST(JsonObject, ReadsStringsAndNumbersByName) {
  const auto o = read_object(R"( {"time":"2025-06-01T12:00:00.123Z","pid":4242,"delay_ms":1.5e3,"ok":true,)"
                             R"("x":null,"nested":{"a":[1,"}"]},"host":"api.z.ai"} )");
  ASSERT_TRUE(o);
  EXPECT_EQ(*string_member(*o, "time"), "2025-06-01T12:00:00.123Z");
  EXPECT_EQ(*string_member(*o, "host"), "api.z.ai");
  EXPECT_EQ(number_member(*o, "pid"), 4242);
  EXPECT_EQ(number_member(*o, "delay_ms"), 1500);
  EXPECT_EQ(string_member(*o, "pid"), nullptr);      // a number is not a string
  EXPECT_EQ(number_member(*o, "host"), std::nullopt);  // nor the other way round
  EXPECT_EQ(string_member(*o, "ok"), nullptr);
  EXPECT_EQ(number_member(*o, "missing"), std::nullopt);
}

TEST(JsonObject, UnescapesExactly) {
  const auto o = read_object(R"({"p":"\"\\\/\b\f\n\r\t\u0001\u00e9\ud83d\ude00\ud800x"})");
  ASSERT_TRUE(o);
  EXPECT_EQ(*string_member(*o, "p"), "\"\\/\b\f\n\r\t\x01\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBDx");
}

TEST(JsonObject, ReadsBackWhatTheEscaperWrote) {
  const std::string nasty = "a\"b\\c\nd\x01\x7f\xE9\xA3\x8E";
  const auto o = read_object("{\"" + std::string(attempt_log::kPath) + "\":" + json_text::quote(nasty) + "}");
  ASSERT_TRUE(o);
  EXPECT_EQ(*string_member(*o, attempt_log::kPath), nasty);
}

TEST(JsonObject, RefusesWhatIsNotOneObject) {
  for (const char* bad : {"", "[]", "{", "{\"a\":1", "{\"a\":1} x", "{\"a\" 1}", "{\"a\":\"raw\nnewline\"}",
                          "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":1,}", "{a:1}", "{\"a\":tru}",
                          "{\"a\":1.2.3}", "{\"a\":01}", "{\"a\":+1}", "{\"a\":{]}"}) {
    EXPECT_FALSE(read_object(bad)) << bad;
  }
  EXPECT_TRUE(read_object("{}"));
}

// An unpaired high surrogate before another escape: U+FFFD, then the escape on its own (the same
// rule as the error-body scan's: core/json_cursor.h).
TEST(JsonObject, AnUnpairedSurrogateBeforeAnotherEscapeIsReplaced) {
  const auto o = read_object(R"({"a":"\ud800\u0041","n":{"deep":[1,{"x":null}]},"m":-0.5e-2})");
  ASSERT_TRUE(o);
  EXPECT_EQ(*string_member(*o, "a"), "\xEF\xBF\xBD" "A");
  EXPECT_EQ(number_member(*o, "m"), -0.005);
  EXPECT_EQ(string_member(*o, "n"), nullptr);
}

TEST(JsonObject, ARepeatedMemberKeepsTheLastValue) {
  const auto o = read_object(R"({"a":"1","a":"2"})");
  ASSERT_TRUE(o);
  EXPECT_EQ(*string_member(*o, "a"), "2");
}

TEST(AttemptLog, FieldsInTheOrderTheLineHasThem) {
  EXPECT_EQ(attempt_log::kFields.front(), "time");
  EXPECT_EQ(attempt_log::kFields.back(), "fallback");
  EXPECT_EQ(attempt_log::kFields[10], "reason");
}

}  // namespace
}  // namespace curlretry::core::json
