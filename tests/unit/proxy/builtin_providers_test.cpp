// What `curlretry -- COMMAND` adds to the config with no config file (proxy/builtin_providers.h):
// here, the hosts the user's own settings name, and where each was taken from for the launch's line.
#include "proxy/builtin_providers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "proxy/agent_settings.h"
#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

using Hosts = std::vector<std::string>;

class GivenHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = std::filesystem::current_path();
    std::filesystem::create_directories(scratch_.path("work"));
    std::filesystem::current_path(scratch_.path("work"));  // no project settings of the test runner's
    scratch_.set("HOME", scratch_.path("home"));
    for (const char* name :
         {"CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "CODEX_HOME", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL",
          "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_FOUNDRY_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL",
          "CODE_ASSIST_ENDPOINT", "AZURE_OPENAI_BASE_URL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
          "ANTHROPIC_BEDROCK_BASE_URL", "QWEN_HOME", "QWEN_CODE_SYSTEM_SETTINGS_PATH",
          "QWEN_CODE_SYSTEM_DEFAULTS_PATH"}) {
      scratch_.set(name, nullptr);
    }
  }
  void TearDown() override { std::filesystem::current_path(before_); }

  testing::Scratch scratch_;
  std::filesystem::path before_;
};

TEST_F(GivenHosts, EachNamedWithTheSettingItCameFrom) {
  scratch_.set("ANTHROPIC_BASE_URL", "https://gw.example/anthropic");
  scratch_.write("home/.claude/settings.json", R"({"env": {"ANTHROPIC_FOUNDRY_BASE_URL": "https://foundry.example"}})");
  scratch_.write("home/.gemini/.env", "GOOGLE_GEMINI_BASE_URL=https://gemini-gw.example\n");
  const std::string models =
      scratch_.write("home/.pi/agent/models.json", R"({"providers": {"c": {"baseUrl": "https://pi-gw.example/v1"}}})");
  const std::string codex =
      scratch_.write("home/.codex/config.toml", "[model_providers.c]\nbase_url = \"https://codex-gw.example/v1\"\n");
  config::Config cfg;
  const BuiltinProviders added = add_builtin_providers(cfg);
  EXPECT_EQ(
      added.given_hosts,
      (Hosts{"gw.example (ANTHROPIC_BASE_URL)",
             "gemini-gw.example (GOOGLE_GEMINI_BASE_URL in " + scratch_.path("home/.gemini/.env") + ")",
             "foundry.example (ANTHROPIC_FOUNDRY_BASE_URL in " + scratch_.path("home/.claude/settings.json") + ")",
             "pi-gw.example (" + models + ")", "codex-gw.example (" + codex + ")"}));
  for (const char* host : {"gw.example", "gemini-gw.example", "foundry.example", "pi-gw.example", "codex-gw.example"}) {
    EXPECT_NE(std::find(cfg.proxy.intercept.begin(), cfg.proxy.intercept.end(), host), cfg.proxy.intercept.end())
        << host;
  }
  EXPECT_FALSE(added.route_names.empty());
}

TEST_F(GivenHosts, ClaudesBedrockGatewayWhenItAuthenticatesForClaude) {
  scratch_.set("CLAUDE_CODE_USE_BEDROCK", "1");
  scratch_.set("ANTHROPIC_BEDROCK_BASE_URL", "https://bedrock-gw.example/bedrock");
  config::Config signed_by_claude;
  EXPECT_EQ(add_builtin_providers(signed_by_claude).given_hosts, Hosts{});  // signed: left to the config
  scratch_.set("CLAUDE_CODE_SKIP_BEDROCK_AUTH", "1");
  config::Config cfg;
  EXPECT_EQ(add_builtin_providers(cfg).given_hosts, Hosts{"bedrock-gw.example (ANTHROPIC_BEDROCK_BASE_URL)"});
  EXPECT_EQ(claude_bedrock_unretried("claude", cfg.proxy.intercept), "");  // and no line says it is not retried
  // AWS's own host stays left to the config, whatever the switches say.
  scratch_.set("ANTHROPIC_BEDROCK_BASE_URL", "https://bedrock-runtime.us-east-1.amazonaws.com");
  config::Config aws;
  EXPECT_EQ(add_builtin_providers(aws).given_hosts, Hosts{});
}

TEST_F(GivenHosts, NotAKnownHostNorOneLeftOutNorTheSameTwice) {
  scratch_.set("ANTHROPIC_BASE_URL", "https://api.anthropic.com");                // built in already
  scratch_.set("OPENAI_BASE_URL", "http://gw.example/v1");                        // not https: forwarded anyway
  scratch_.set("ANTHROPIC_VERTEX_BASE_URL", "https://127.0.0.1:8443/v1");         // loopback
  scratch_.set("ANTHROPIC_FOUNDRY_BASE_URL", "https://chatgpt.com/backend-api");  // left to the config
  scratch_.set("GOOGLE_GEMINI_BASE_URL", "https://twice.example");
  scratch_.set("CODE_ASSIST_ENDPOINT", "https://twice.example/code");
  config::Config cfg;
  EXPECT_EQ(add_builtin_providers(cfg).given_hosts, Hosts{"twice.example (GOOGLE_GEMINI_BASE_URL)"});
}

TEST_F(GivenHosts, NeverTheCredentialsABaseUrlCarries) {
  scratch_.set("ANTHROPIC_BASE_URL", "https://team:s3cret-token@gw.example/anthropic?key=s3cret-key");
  config::Config cfg;
  const Hosts given = add_builtin_providers(cfg).given_hosts;
  EXPECT_EQ(given, Hosts{"gw.example (ANTHROPIC_BASE_URL)"});
}

TEST_F(GivenHosts, WhereItCameFromIsEscapedForTheLine) {
  // A directory name may carry bytes a terminal acts on (an escape sequence, a newline).
  const std::string codex_home = scratch_.path("co\x1b[2Jdex\nhome");
  scratch_.set("CODEX_HOME", codex_home);
  scratch_.write("co\x1b[2Jdex\nhome/config.toml", "[model_providers.c]\nbase_url = \"https://codex-gw.example/v1\"\n");
  config::Config cfg;
  EXPECT_EQ(add_builtin_providers(cfg).given_hosts,
            Hosts{"codex-gw.example (" + scratch_.path("co\\x1b[2Jdex\\nhome/config.toml") + ")"});
}

TEST_F(GivenHosts, QwenCodesProvidersFromItsSettingsAndEnvFiles) {
  const std::string settings =
      scratch_.write("home/.qwen/settings.json",
                     R"({"modelProviders": {"openai": [{"id": "m", "baseUrl": "https://qwen-gw.example/v1"}]}})");
  const std::string env = scratch_.write("home/.qwen/.env", "OPENAI_BASE_URL=https://qwen-env-gw.example/v1\n");
  config::Config cfg;
  const BuiltinProviders added = add_builtin_providers(cfg);
  EXPECT_EQ(added.given_hosts,
            (Hosts{"qwen-gw.example (" + settings + ")", "qwen-env-gw.example (OPENAI_BASE_URL in " + env + ")"}));
  ASSERT_EQ(added.file_variables.size(), 1u);
  EXPECT_EQ(added.file_variables[0].name, "OPENAI_BASE_URL");
  EXPECT_EQ(added.file_variables[0].file, env);
}

TEST_F(GivenHosts, AVariableAFileLoadsOverAnUnsetOneIsNeverHandedARoute) {
  // A Node program's .env (its dotenv, `node --env-file`) pointing the SDK at a local model server:
  // not a host to intercept, but the launch must leave OPENAI_BASE_URL unset, or the program would
  // send its requests, and its key, to api.openai.com.
  scratch_.write("work/.env", "OPENAI_BASE_URL=http://localhost:11434/v1\nANTHROPIC_BASE_URL=\n");
  // An empty one leaves the program on the SDK's default host, where the route leads too. Claude
  // Code's settings are claude's alone (it applies them over the environment).
  scratch_.write("home/.claude/settings.json", R"({"env": {"ANTHROPIC_BASE_URL": "https://kimi.example/anthropic"}})");
  config::Config cfg;
  const BuiltinProviders added = add_builtin_providers(cfg);
  ASSERT_EQ(added.file_variables.size(), 1u);
  EXPECT_EQ(added.file_variables[0].name, "OPENAI_BASE_URL");
  EXPECT_EQ(added.file_variables[0].file, scratch_.path("work/.env"));
  EXPECT_EQ(added.given_hosts,
            Hosts{"kimi.example (ANTHROPIC_BASE_URL in " + scratch_.path("home/.claude/settings.json") + ")"});
}

}  // namespace
}  // namespace curlretry::proxy
