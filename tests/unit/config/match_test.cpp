// Picking the rule for a request (the URL it is picked by is split in core/url.h).
#include <gtest/gtest.h>

#include "test_env.h"

namespace curlretry::config {
namespace {

using testing::load_yaml;

constexpr const char* kRules = R"(version: 1
defaults:
  max_attempts: 2
rules:
  - name: glm
    match: {host: "open.bigmodel.cn", path: "/api/*", method: POST}
    max_attempts: 5
  - name: zai
    match: {host: "*.z.ai"}
    max_attempts: 6
  - name: get-v1
    match: {path: "/v[0-9]/models", method: get}
    max_attempts: 7
)";

class Matching : public ::testing::Test {
 protected:
  void SetUp() override {
    result_ = load_yaml(kRules);
    ASSERT_TRUE(result_.ok()) << result_.error;
  }
  std::string rule_for(std::string_view method, std::string_view host, std::string_view path) {
    const Rule* rule = result_.config->match(method, host, path);
    return rule ? rule->name : "defaults";
  }
  LoadResult result_;
};

TEST_F(Matching, HostGlobIsCaseInsensitive) {
  EXPECT_EQ(rule_for("POST", "OPEN.BigModel.cn", "/api/paas/v4/chat/completions"), "glm");
  EXPECT_EQ(rule_for("GET", "API.Z.AI", "/x"), "zai");
  EXPECT_EQ(rule_for("GET", "z.ai", "/x"), "defaults");
}

TEST_F(Matching, PathGlobIsCaseSensitiveAndSeesNoQuery) {
  EXPECT_EQ(rule_for("POST", "open.bigmodel.cn", "/API/x"), "defaults");
  EXPECT_EQ(rule_for("POST", "open.bigmodel.cn", "/other"), "defaults");
  EXPECT_EQ(rule_for("GET", "example.com", "/v1/models"), "get-v1");
  EXPECT_EQ(rule_for("GET", "example.com", "/vx/models"), "defaults");
}

TEST_F(Matching, MethodIsExactButCaseInsensitive) {
  EXPECT_EQ(rule_for("post", "open.bigmodel.cn", "/api/x"), "glm");
  EXPECT_EQ(rule_for("GET", "open.bigmodel.cn", "/api/x"), "defaults");
  EXPECT_EQ(rule_for("POSTX", "open.bigmodel.cn", "/api/x"), "defaults");
}

TEST_F(Matching, FirstMatchingRuleWins) {
  // get-v1 would match too, but zai comes first.
  EXPECT_EQ(rule_for("GET", "api.z.ai", "/v1/models"), "zai");
}

TEST_F(Matching, TrailingDotAndEmptyPathAreNormalised) {
  EXPECT_EQ(rule_for("GET", "api.z.ai.", "/"), "zai");
  EXPECT_EQ(rule_for("POST", "open.bigmodel.cn", ""), "defaults");  // "" is "/", not under /api/
}

TEST_F(Matching, PolicyForReturnsTheRulePolicyOrTheDefaults) {
  EXPECT_EQ(result_.config->policy_for("POST", "open.bigmodel.cn", "/api/x").max_attempts, 5);
  EXPECT_EQ(result_.config->policy_for("GET", "example.org", "/").max_attempts, 2);
}

TEST(Match, ARuleWithoutMatchMatchesEverything) {
  const LoadResult r = load_yaml("version: 1\nrules:\n  - name: all\n    max_attempts: 9\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->policy_for("DELETE", "anything", "/at/all").max_attempts, 9);
}

}  // namespace
}  // namespace curlretry::config
