// What the launcher reads of Claude Code's settings files (proxy/agent_settings.h): the top-level
// "env" block's base URLs, nothing nested elsewhere, nothing from a file that is not JSON.
#include "proxy/agent_settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

const std::vector<std::string_view> kNames = {"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"};

using Values = std::vector<std::string>;

Values values(std::string_view json) {
  Values out;
  for (const SettingsValue& v : settings_env_values(json, kNames)) out.push_back(v.name + "=" + v.value);
  return out;
}

TEST(ClaudeSettings, TheEnvBlocksBaseUrls) {
  EXPECT_EQ(values(
                R"({"model": "opus", "env": {"FOO": "bar", "ANTHROPIC_BASE_URL": "https://gw.example/anthropic",
                                     "OPENAI_BASE_URL": "https:\/\/o.example"}, "permissions": {"allow": []}})"),
            (Values{"ANTHROPIC_BASE_URL=https://gw.example/anthropic", "OPENAI_BASE_URL=https://o.example"}));
  EXPECT_EQ(values("\xEF\xBB\xBF\n{ \"env\" : { \"ANTHROPIC_BASE_URL\" : \"https://gw\" } }\n"),
            Values{"ANTHROPIC_BASE_URL=https://gw"});
}

TEST(ClaudeSettings, NothingNestedElsewhereOrNotAString) {
  EXPECT_EQ(values(R"({"mcpServers": {"a": {"env": {"ANTHROPIC_BASE_URL": "https://no"}}}})"), Values{});
  EXPECT_EQ(values(R"({"env": {"ANTHROPIC_BASE_URL": 3, "OPENAI_BASE_URL": null}})"), Values{});
  EXPECT_EQ(values(R"({"env": ["ANTHROPIC_BASE_URL", "https://no"]})"), Values{});
}

TEST(ClaudeSettings, NothingFromTextThatIsNotOneJsonObject) {
  EXPECT_EQ(values(R"({"env": {"ANTHROPIC_BASE_URL": "https://gw"}} trailing)"), Values{});
  EXPECT_EQ(values(R"({"env": {"ANTHROPIC_BASE_URL": "https://gw"})"), Values{});
  EXPECT_EQ(values(R"(// a comment
{"env": {"ANTHROPIC_BASE_URL": "https://gw"}})"),
            Values{});
  EXPECT_EQ(values(""), Values{});
  EXPECT_EQ(values(std::string(100, '[')), Values{});
}

// Claude Code on Bedrock and nothing of the test runner's: no settings file of the user's, every
// variable the readers look at unset but CLAUDE_CODE_USE_BEDROCK=1.
class ClaudeOnBedrock : public ::testing::Test {
 protected:
  void SetUp() override {
    env.set("HOME", "/nonexistent");
    env.set("CLAUDE_CONFIG_DIR", nullptr);
    env.set("CLAUDE_CODE_USE_BEDROCK", "1");
    for (const char* name :
         {"AWS_REGION", "AWS_DEFAULT_REGION", "ANTHROPIC_BEDROCK_BASE_URL", "CLAUDE_CODE_SKIP_BEDROCK_AUTH"}) {
      env.set(name, nullptr);
    }
  }

  testing::Scratch env;
};

TEST_F(ClaudeOnBedrock, TheLineNamesTheRegionsHostUnlessAGlobCoversIt) {
  env.set("AWS_REGION", "eu-west-3");
  EXPECT_EQ(claude_bedrock_unretried("/opt/bin/claude", {"api.anthropic.com"}),
            "curlretry: proxy: claude uses Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK): its requests go to "
            "bedrock-runtime.eu-west-3.amazonaws.com, which curlretry does not intercept unless told (they are signed "
            "over their headers), so none of them is retried; to retry them, add bedrock-runtime.*.amazonaws.com to "
            "proxy.intercept in your config");
  EXPECT_EQ(claude_bedrock_unretried("claude", {"bedrock-runtime.*.amazonaws.com"}), "");
  EXPECT_EQ(claude_bedrock_unretried("codex", {}), "");
  env.set("AWS_REGION", nullptr);
  EXPECT_NE(claude_bedrock_unretried("claude", {}).find("bedrock-runtime.us-east-1.amazonaws.com"), std::string::npos);
  for (const char* off : {"0", "false", "FALSE", "", "no", "off", "2"}) {  // claude's own reading of a switch
    env.set("CLAUDE_CODE_USE_BEDROCK", off);
    EXPECT_EQ(claude_bedrock_unretried("claude", {}), "") << off;
  }
}

TEST_F(ClaudeOnBedrock, AGatewayItsBaseUrlNamesIsTheHostTheLineNames) {
  // Claude Code's LLM-gateway guide: ANTHROPIC_BEDROCK_BASE_URL=https://litellm.example/bedrock.
  // Before, the line named bedrock-runtime.us-east-1.amazonaws.com, which claude never reaches.
  env.set("AWS_REGION", "eu-west-3");
  env.set("ANTHROPIC_BEDROCK_BASE_URL", "https://litellm.example:4000/bedrock");
  EXPECT_EQ(
      claude_bedrock_unretried("claude", {"bedrock-runtime.*.amazonaws.com"}),
      "curlretry: proxy: claude uses Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK) through ANTHROPIC_BEDROCK_BASE_URL: "
      "its requests go to litellm.example, which curlretry does not intercept unless told (they are signed over "
      "their headers), so none of them is retried; to retry them, add litellm.example to proxy.intercept in "
      "your config");
  EXPECT_EQ(claude_bedrock_unretried("claude", {"litellm.example"}), "");
  // One on this machine never meets curlretry's proxy; a plain http:// one is forwarded, and retried.
  for (const char* direct : {"https://localhost:4000/bedrock", "https://127.0.0.1/bedrock", "http://litellm.example"}) {
    env.set("ANTHROPIC_BEDROCK_BASE_URL", direct);
    EXPECT_EQ(claude_bedrock_unretried("claude", {}), "") << direct;
  }
}

TEST_F(ClaudeOnBedrock, ItsSettingsRegionIsTheOneClaudeUses) {
  // Bedrock guides put CLAUDE_CODE_USE_BEDROCK and AWS_REGION in settings.json's env block,
  // which claude applies over the environment it was given.
  env.write("settings.json", R"({"env": {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "ap-northeast-1"}})");
  env.set("CLAUDE_CONFIG_DIR", env.dir());
  env.set("CLAUDE_CODE_USE_BEDROCK", nullptr);
  env.set("AWS_REGION", "eu-west-3");
  const std::string line = claude_bedrock_unretried("claude", {});
  EXPECT_NE(line.find("its requests go to bedrock-runtime.ap-northeast-1.amazonaws.com,"), std::string::npos) << line;
}

TEST_F(ClaudeOnBedrock, AGatewayThatAuthenticatesForClaudeIsItsBaseUrl) {
  // The LLM-gateway guide's Bedrock setup: claude sends the gateway unsigned requests.
  env.set("CLAUDE_CODE_SKIP_BEDROCK_AUTH", " Yes ");
  env.set("ANTHROPIC_BEDROCK_BASE_URL", "https://litellm.example/bedrock");
  std::optional<SettingsValue> gateway = claude_bedrock_gateway();
  ASSERT_TRUE(gateway.has_value());
  EXPECT_EQ(gateway->name, "ANTHROPIC_BEDROCK_BASE_URL");
  EXPECT_EQ(gateway->value, "https://litellm.example/bedrock");
  EXPECT_EQ(gateway->file, "");
  // Claude signs its requests (AWS credentials), or is not on Bedrock: none.
  for (const char* off : {"0", "false", "no", ""}) {
    env.set("CLAUDE_CODE_SKIP_BEDROCK_AUTH", off);
    EXPECT_FALSE(claude_bedrock_gateway().has_value()) << off;
  }
  env.set("CLAUDE_CODE_SKIP_BEDROCK_AUTH", nullptr);
  EXPECT_FALSE(claude_bedrock_gateway().has_value());
  env.set("CLAUDE_CODE_SKIP_BEDROCK_AUTH", "1");
  env.set("CLAUDE_CODE_USE_BEDROCK", "0");
  EXPECT_FALSE(claude_bedrock_gateway().has_value());
  env.set("CLAUDE_CODE_USE_BEDROCK", "true");
  env.set("ANTHROPIC_BEDROCK_BASE_URL", nullptr);
  EXPECT_FALSE(claude_bedrock_gateway().has_value());  // unsigned to AWS itself: nothing to take
}

TEST_F(ClaudeOnBedrock, ItsSettingsGatewayIsTheOneClaudeUses) {
  const std::string file = env.write("settings.json", R"({"env": {"CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1",
      "ANTHROPIC_BEDROCK_BASE_URL": "https://gw.corp.example/bedrock"}})");
  env.set("CLAUDE_CONFIG_DIR", env.dir());
  env.set("CLAUDE_CODE_SKIP_BEDROCK_AUTH", "0");  // the settings' env wins, as in claude
  env.set("ANTHROPIC_BEDROCK_BASE_URL", "https://other.example");
  std::optional<SettingsValue> gateway = claude_bedrock_gateway();
  ASSERT_TRUE(gateway.has_value());
  EXPECT_EQ(gateway->value, "https://gw.corp.example/bedrock");
  EXPECT_EQ(gateway->file, file);
}

}  // namespace
}  // namespace curlretry::proxy
