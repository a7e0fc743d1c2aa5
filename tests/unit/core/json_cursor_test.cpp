// The one JSON grammar in core/ (core/json_cursor.h): what its three readers share.
#include "core/json_cursor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace curlretry::core {
namespace {

bool skips_whole(std::string_view text, int max_depth = 32) {
  JsonCursor c(text, max_depth);
  if (!c.skip_value(0)) return false;
  c.skip_space();
  return c.at_end();
}

TEST(JsonCursor, SkipsEveryWellFormedValue) {
  for (const char* good : {"0", "-0", "1.5", "-12.5e+3", "2E-7", "true", "false", "null", "\"\"", "\"a\\u00e9\\n\"",
                           " [ ] ", "{}", "[1,\"x\",{\"a\":[null,{}]}]", "{\"a\" : 1 , \"b\":[true]}"}) {
    EXPECT_TRUE(skips_whole(good)) << good;
  }
}

TEST(JsonCursor, RefusesWhatTheGrammarDoesNot) {
  for (const char* bad : {"", "01", "+1", "1.", ".5", "1e", "-", "tru", "nul", "\"a", "\"\\x\"", "\"\\u12\"",
                          "\"raw\ncontrol\"", "[1,]", "[1 2]", "{\"a\"}", "{\"a\":1,}", "{a:1}", "{]", "[}"}) {
    EXPECT_FALSE(skips_whole(bad)) << bad;
  }
}

TEST(JsonCursor, NestingPastItsBoundIsRefusedWithoutRecursingFurther) {
  EXPECT_TRUE(skips_whole("[[[1]]]", 3));
  EXPECT_FALSE(skips_whole("[[[[1]]]]", 3));
  EXPECT_FALSE(skips_whole(std::string(100000, '['), 32));  // hostile: refused at 32 levels
}

TEST(JsonCursor, UnescapesStringsAndReplacesUnpairedSurrogates) {
  const auto read = [](std::string_view text) {
    JsonCursor c(text, 1);
    std::string out = "stale";
    return c.string(&out) ? out : std::string("<bad>");
  };
  EXPECT_EQ(read(R"("\"\\\/\b\f\n\r\t")"), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(read(R"("\u00E9\ud83d\ude00")"), "\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(read(R"("\ud800x")"), "\xEF\xBF\xBDx");                // a lone high half
  EXPECT_EQ(read(R"("\udc00")"), "\xEF\xBF\xBD");                  // a lone low half
  EXPECT_EQ(read(R"("\ud800\u0041")"), "\xEF\xBF\xBD" "A");         // high, then not a low: read on its own
  EXPECT_EQ(read(R"("\ud800\uzzzz")"), "<bad>");                   // ... and still checked
  EXPECT_EQ(read("\"cut"), "<bad>");
}

// The hook sees every member of every object skip_value passes, at any depth, with the cursor
// after the ':'; a value it reads is not read again, and a broken one ends the walk.
struct Names : JsonCursor::MemberHook {
  std::vector<std::string> seen;
  JsonCursor::Take take(JsonCursor& cursor, const std::string& key) override {
    seen.push_back(key);
    if (key != "grab") return JsonCursor::Take::no;
    cursor.skip_space();
    std::string value;
    if (!cursor.string(&value)) return JsonCursor::Take::broken;
    seen.push_back("=" + value);
    return JsonCursor::Take::read;
  }
};

TEST(JsonCursor, AMemberHookSeesEveryMemberInDocumentOrder) {
  Names names;
  JsonCursor c(R"({"a":{"grab":"x","b":[{"grab" : "y"}]},"c":1})", 8);
  EXPECT_TRUE(c.skip_value(0, &names));
  EXPECT_EQ(names.seen, (std::vector<std::string>{"a", "grab", "=x", "b", "grab", "=y", "c"}));

  Names broken;
  JsonCursor d(R"({"grab":7,"c":1})", 8);
  EXPECT_FALSE(d.skip_value(0, &broken));
  EXPECT_EQ(broken.seen, (std::vector<std::string>{"grab"}));
}

}  // namespace
}  // namespace curlretry::core
