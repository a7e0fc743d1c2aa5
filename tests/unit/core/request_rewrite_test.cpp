// The fallback's rewrites: only the top-level model's value changes, byte for byte.
#include <gtest/gtest.h>

#include "core/request_rewrite.h"

namespace curlretry::core {
namespace {

std::string swapped(std::string_view body, std::string_view model = "claude-y") {
  auto s = replace_model(body, model);
  return s ? s->body : "<none>";
}

TEST(ReplaceModel, OnlyTheTopLevelValueChanges) {
  const std::string body =
      "{ \"messages\": [{\"role\":\"user\",\"content\":\"model: \\\"x\\\"\"}],\n  \"model\" : \"claude-x\", "
      "\"meta\":{\"model\":\"inner\"}, \"n\": -1.5e3, \"stream\":false, \"t\":null}";
  auto s = replace_model(body, "claude-y");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->old_model, "claude-x");
  std::string expected = body;
  expected.replace(expected.find("claude-x"), 8, "claude-y");
  EXPECT_EQ(s->body, expected);
}

TEST(ReplaceModel, ANestedModelOrNoneIsLeftAlone) {
  EXPECT_EQ(swapped("{\"meta\":{\"model\":\"inner\"}}"), "<none>");
  EXPECT_EQ(swapped("{}"), "<none>");
  EXPECT_EQ(swapped("{\"model\": 7}"), "<none>");
}

TEST(ReplaceModel, NotJsonIsLeftAlone) {
  EXPECT_EQ(swapped("model=claude-x&x=1"), "<none>");
  EXPECT_EQ(swapped("[{\"model\":\"a\"}]"), "<none>");
  EXPECT_EQ(swapped("{\"model\":\"a\"} trailing"), "<none>");
  EXPECT_EQ(swapped("{\"model\":\"a\""), "<none>");
  EXPECT_EQ(swapped(std::string(2000, '[')), "<none>");
}

TEST(ReplaceModel, FirstModelKeyWinsAndOthersStay) {
  EXPECT_EQ(swapped("{\"model\":\"a\",\"model\":\"b\"}"), "{\"model\":\"claude-y\",\"model\":\"b\"}");
}

// The body is read as JSON (core/json_cursor.h): a key is its unescaped name, the old value is
// kept as written, and a body a server would refuse is not rewritten.
TEST(ReplaceModel, ReadsTheBodyAsJson) {
  EXPECT_EQ(swapped("{\"mod\\u0065l\":\"a\"}"), "{\"mod\\u0065l\":\"claude-y\"}");
  auto s = replace_model("{\"model\":\"a\\\"b\"}", "m");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->old_model, "a\\\"b");
  EXPECT_EQ(s->body, "{\"model\":\"m\"}");
  EXPECT_EQ(swapped("{\"model\":\"a\",\"x\":\"\\q\"}"), "<none>");  // an unknown escape
  EXPECT_EQ(swapped("{\"model\":\"a\",\"n\":01}"), "<none>");       // not a JSON number
}

TEST(ReplaceOrigin, KeepsPathAndQuery) {
  EXPECT_EQ(*replace_origin("https://api.example.com/v1/messages?x=1", "http://127.0.0.1:8080/proxy"),
            "http://127.0.0.1:8080/proxy/v1/messages?x=1");
  EXPECT_EQ(*replace_origin("https://api.example.com", "http://b"), "http://b");
  EXPECT_EQ(*replace_origin("http://u:p@h:1?q", "http://b"), "http://b?q");
  EXPECT_FALSE(replace_origin("api.example.com/v1", "http://b"));
}

}  // namespace
}  // namespace curlretry::core
