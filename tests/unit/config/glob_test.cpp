#include "config/glob.h"

#include <gtest/gtest.h>

namespace curlretry::config {
namespace {

TEST(Glob, StarCrossesSlashesSoApiStarCoversEverySubpath) {
  EXPECT_TRUE(glob_match("/api/*", "/api/paas/v4/chat/completions", false));
  EXPECT_TRUE(glob_match("/api/*", "/api/", false));
  EXPECT_FALSE(glob_match("/api/*", "/apix", false));
  EXPECT_TRUE(glob_match("*", "", false));
  EXPECT_TRUE(glob_match("*.z.ai", "api.z.ai", false));
  EXPECT_FALSE(glob_match("*.z.ai", "z.ai", false));
}

TEST(Glob, QuestionMarkIsExactlyOneByte) {
  EXPECT_TRUE(glob_match("/v?/x", "/v1/x", false));
  EXPECT_FALSE(glob_match("/v?/x", "/v12/x", false));
  EXPECT_FALSE(glob_match("/v?/x", "/v/x", false));
}

TEST(Glob, ClassesRangesNegationAndLiteralBracket) {
  EXPECT_TRUE(glob_match("/v[0-9]/*", "/v4/chat", false));
  EXPECT_FALSE(glob_match("/v[0-9]/*", "/vx/chat", false));
  EXPECT_TRUE(glob_match("[!a]b", "xb", false));
  EXPECT_FALSE(glob_match("[!a]b", "ab", false));
  EXPECT_TRUE(glob_match("[^a]b", "xb", false));
  EXPECT_TRUE(glob_match("[]]", "]", false));
  EXPECT_TRUE(glob_match("[a-]", "-", false));
}

TEST(Glob, BackslashTakesTheNextCharacterLiterally) {
  EXPECT_TRUE(glob_match("a\\*b", "a*b", false));
  EXPECT_FALSE(glob_match("a\\*b", "axb", false));
}

TEST(Glob, FoldCaseIsForHostsOnly) {
  EXPECT_TRUE(glob_match("open.bigmodel.cn", "Open.BigModel.CN", true));
  EXPECT_FALSE(glob_match("/API/*", "/api/x", false));
  EXPECT_TRUE(glob_match("[A-Z]pi.x", "api.x", true));
}

TEST(Glob, ManyStarsStayFast) {
  const std::string text(5000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*b", text, false));
}

TEST(Glob, ValidationNamesTheProblem) {
  EXPECT_EQ(glob_error("/api/*"), std::nullopt);
  EXPECT_EQ(glob_error("[]]"), std::nullopt);
  EXPECT_EQ(glob_error("api.[z"), "unclosed '[' at offset 4");
  EXPECT_EQ(glob_error("[!"), "unclosed '[' at offset 0");
  EXPECT_EQ(glob_error("ab\\"), "trailing '\\' escapes nothing");
  EXPECT_EQ(glob_error("[z-a]"), "reversed range 'z-a' at offset 0");
  EXPECT_FALSE(glob_match("api.[z", "api.[z", false)) << "an invalid pattern matches nothing";
}

}  // namespace
}  // namespace curlretry::config
