#include <gtest/gtest.h>

#include "core/body_scan.h"

namespace curlretry::core {
namespace {

TEST(JsonScalarAt, TopLevelNumberIsVerbatimText) {
  EXPECT_EQ(json_scalar_at(R"({"code":3007,"msg":"captcha verify failed"})", "code"), "3007");
}

TEST(JsonScalarAt, TopLevelStringIsUnquoted) {
  EXPECT_EQ(json_scalar_at(R"({"code":3007,"msg":"captcha verify failed"})", "msg"), "captcha verify failed");
}

TEST(JsonScalarAt, NestedPathZaiStyle) {
  EXPECT_EQ(json_scalar_at(R"({"error":{"code":"1302","message":"并发数过高"}})", "error.code"), "1302");
}

TEST(JsonScalarAt, OpenAiErrorType) {
  const char* body = R"({
    "error": {
      "message": "You exceeded your current quota",
      "type": "insufficient_quota",
      "param": null,
      "code": "insufficient_quota"
    }
  })";
  EXPECT_EQ(json_scalar_at(body, "error.type"), "insufficient_quota");
  EXPECT_EQ(json_scalar_at(body, "error.param"), "null");
}

TEST(JsonScalarAt, NumbersKeepTheirSpelling) {
  EXPECT_EQ(json_scalar_at(R"({"a":-1.50e+3})", "a"), "-1.50e+3");
  EXPECT_EQ(json_scalar_at(R"({"a":0})", "a"), "0");
  EXPECT_EQ(json_scalar_at(R"({"a": 1302 })", "a"), "1302");
}

TEST(JsonScalarAt, LiteralsAreVerbatim) {
  EXPECT_EQ(json_scalar_at(R"({"a":true,"b":false,"c":null})", "a"), "true");
  EXPECT_EQ(json_scalar_at(R"({"a":true,"b":false,"c":null})", "b"), "false");
  EXPECT_EQ(json_scalar_at(R"({"a":true,"b":false,"c":null})", "c"), "null");
}

TEST(JsonScalarAt, SkipsEarlierMembersOfEveryKind) {
  const char* body = R"({"s":"x\"}","n":-0.5,"o":{"code":1,"deep":[{"code":2}]},"a":[1,"code",{}],"t":true,"code":42})";
  EXPECT_EQ(json_scalar_at(body, "code"), "42");
}

TEST(JsonScalarAt, OnlyObjectKeysAlongThePathCount) {
  // "code" inside an array or a sibling object is not error.code.
  EXPECT_EQ(json_scalar_at(R"({"errors":[{"code":1}],"other":{"code":2}})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"error":[{"code":1}]})", "error.code"), std::nullopt);
}

TEST(JsonScalarAt, StringEscapesAreDecoded) {
  EXPECT_EQ(json_scalar_at(R"({"m":"a\"b\\c\/d\n\t"})", "m"), "a\"b\\c/d\n\t");
  EXPECT_EQ(json_scalar_at(R"({"m":"\b\f\r"})", "m"), "\b\f\r");
}

TEST(JsonScalarAt, UnicodeEscapesBecomeUtf8) {
  EXPECT_EQ(json_scalar_at(R"({"m":"\u98ce\u63a7"})", "m"), "风控");
  EXPECT_EQ(json_scalar_at(R"({"m":"\u00e9"})", "m"), "\xC3\xA9");
  EXPECT_EQ(json_scalar_at(R"({"m":"\u0041"})", "m"), "A");
  EXPECT_EQ(json_scalar_at(R"({"m":"\ud83d\ude00"})", "m"), "\xF0\x9F\x98\x80");
}

TEST(JsonScalarAt, LoneSurrogateBecomesReplacementCharacter) {
  EXPECT_EQ(json_scalar_at(R"({"m":"\ud83dx"})", "m"), "\xEF\xBF\xBDx");
  EXPECT_EQ(json_scalar_at(R"({"m":"\ude00"})", "m"), "\xEF\xBF\xBD");
  EXPECT_EQ(json_scalar_at(R"({"m":"\ud83d\u0041"})", "m"), "\xEF\xBF\xBD" "A");
}

TEST(JsonScalarAt, EscapedKeysAreComparedUnescaped) {
  EXPECT_EQ(json_scalar_at(R"({"c\u006fde":7})", "code"), "7");
}

TEST(JsonScalarAt, FirstOfDuplicateKeysWins) {
  EXPECT_EQ(json_scalar_at(R"({"code":1,"code":2})", "code"), "1");
}

TEST(JsonScalarAt, AbsentKeyGivesNothing) {
  EXPECT_EQ(json_scalar_at(R"({"msg":"x"})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"error":{}})", "error.code"), std::nullopt);
}

TEST(JsonScalarAt, ContainersAreNotScalars) {
  EXPECT_EQ(json_scalar_at(R"({"error":{"code":1}})", "error"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"code":[1302]})", "code"), std::nullopt);
}

TEST(JsonScalarAt, PathThroughAScalarGivesNothing) {
  EXPECT_EQ(json_scalar_at(R"({"error":"boom"})", "error.code"), std::nullopt);
}

TEST(JsonScalarAt, NonObjectRootGivesNothing) {
  EXPECT_EQ(json_scalar_at(R"([{"code":1}])", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"("code")", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at("1302", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at("", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at("<html>code: 1302</html>", "code"), std::nullopt);
}

TEST(JsonScalarAt, LeadingWhitespaceAndBomAreAllowed) {
  EXPECT_EQ(json_scalar_at(" \r\n\t{ \"code\" : 5 }", "code"), "5");
  EXPECT_EQ(json_scalar_at("\xEF\xBB\xBF{\"code\":5}", "code"), "5");
}

TEST(JsonScalarAt, BadPathsGiveNothing) {
  EXPECT_EQ(json_scalar_at(R"({"code":1})", ""), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"":1})", ""), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"a":{"b":1}})", "a..b"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"a":{"b":1}})", ".a"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"a":{"b":1}})", "a."), std::nullopt);
}

TEST(JsonScalarAt, ValueBeforeTruncationIsStillFound) {
  EXPECT_EQ(json_scalar_at(R"({"error":{"code":"1302","message":"High concurr)", "error.code"), "1302");
}

TEST(JsonScalarAt, NumberCutByTruncationIsNotReported) {
  // The prefix may end inside 1302: "13" must not be mistaken for a code.
  EXPECT_EQ(json_scalar_at(R"({"code":13)", "code"), std::nullopt);
}

TEST(JsonScalarAt, TruncatedStringsAndLiteralsGiveNothing) {
  EXPECT_EQ(json_scalar_at(R"({"code":"13)", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"ok":tr)", "ok"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"m":"x\u98)", "m"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"m":"x\)", "m"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"co)", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"msg":"very long message cut)", "code"), std::nullopt);
}

TEST(JsonScalarAt, MalformedBeforeTheKeyGivesNothing) {
  EXPECT_EQ(json_scalar_at(R"({"a" 1,"code":2})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({a:1,"code":2})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"a":01,"code":2})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"a":1 "code":2})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"a":"\q","code":2})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"a":[1,],"code":2})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at("{\"a\":\"raw\ncontrol\",\"code\":2}", "code"), std::nullopt);
}

TEST(JsonScalarAt, ScalarFollowedByJunkIsRejected) {
  EXPECT_EQ(json_scalar_at(R"({"code":1302abc})", "code"), std::nullopt);
  EXPECT_EQ(json_scalar_at(R"({"ok":truex})", "ok"), std::nullopt);
}

TEST(JsonScalarAt, MalformedAfterTheValueDoesNotMatter) {
  EXPECT_EQ(json_scalar_at(R"({"code":1302,%%%garbage)", "code"), "1302");
}

TEST(JsonScalarAt, NestingWithinTheDepthLimitIsSkipped) {
  std::string body = R"({"a":)";
  for (int i = 0; i < 30; ++i) body += '[';
  for (int i = 0; i < 30; ++i) body += ']';
  body += R"(,"code":9})";
  EXPECT_EQ(json_scalar_at(body, "code"), "9");
}

TEST(JsonScalarAt, HostileDeepNestingIsRefusedCheaply) {
  std::string body = R"({"a":)";
  for (int i = 0; i < 100000; ++i) body += '[';
  EXPECT_EQ(json_scalar_at(body, "code"), std::nullopt);
  std::string closed = R"({"a":)" + std::string(40, '[') + std::string(40, ']') + R"(,"code":9})";
  EXPECT_EQ(json_scalar_at(closed, "code"), std::nullopt);
}

TEST(JsonScalarAt, DeepPathIsBounded) {
  std::string body;
  std::string path;
  for (int i = 0; i < 40; ++i) {
    body += R"({"k":)";
    path += i ? ".k" : "k";
  }
  body += "1" + std::string(40, '}');
  EXPECT_EQ(json_scalar_at(body, path), std::nullopt);
  // A path within the limit through the same body reaches an object, not a scalar.
  EXPECT_EQ(json_scalar_at(body, "k.k.k"), std::nullopt);
}

TEST(JsonScalarAt, ModeratelyDeepPathIsFollowed) {
  EXPECT_EQ(json_scalar_at(R"({"a":{"b":{"c":{"d":"deep"}}}})", "a.b.c.d"), "deep");
}

}  // namespace
}  // namespace curlretry::core
