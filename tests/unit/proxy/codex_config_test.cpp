// What the launcher reads of Codex's config.toml (proxy/codex_config.h): the built-in provider's
// openai_base_url and each declared provider's base_url, nothing from text that is not TOML.
#include "proxy/codex_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

using Urls = std::vector<std::string>;

TEST(CodexConfig, TheBuiltInProvidersAndEachDeclaredProvidersBaseUrl) {
  EXPECT_EQ(
      codex_provider_base_urls(R"(model = "gpt-5"
model_provider = "litellm"
openai_base_url = "https://openai-gw.example/v1"

[model_providers.litellm]
name = "LiteLLM"
base_url = "https://litellm.corp.example/v1"
env_key = "LITELLM_API_KEY"

[model_providers.azure]
base_url = "https://res.openai.azure.com/openai"

[model_providers.ollama]
name = "Ollama"

[profiles.work]
model_provider = "litellm"
)"),
      (Urls{"https://openai-gw.example/v1", "https://res.openai.azure.com/openai", "https://litellm.corp.example/v1"}));
  EXPECT_EQ(codex_provider_base_urls(R"(model_providers = { gw = { base_url = 'https://gw.example' } })"),
            Urls{"https://gw.example"});
}

TEST(CodexConfig, NothingFromTextThatIsNotTomlOrNotAString) {
  EXPECT_EQ(codex_provider_base_urls("[model_providers.gw]\nbase_url = \"https://gw.example\"\nbase_url = \"x\"\n"),
            Urls{});  // a key given twice: Codex refuses the file too
  EXPECT_EQ(codex_provider_base_urls("[model_providers.gw\nbase_url = \"https://gw.example\"\n"), Urls{});
  EXPECT_EQ(codex_provider_base_urls("openai_base_url = 3\nmodel_providers = [\"https://no\"]\n"), Urls{});
  EXPECT_EQ(codex_provider_base_urls(std::string(4096, '[')), Urls{});
  EXPECT_EQ(codex_provider_base_urls(""), Urls{});
}

TEST(CodexHomeDir, HomesCodexOrCodexHome) {
  testing::Scratch scratch;
  scratch.write(".codex/config.toml", "openai_base_url = \"https://home.example/v1\"\n");
  const std::string elsewhere =
      scratch.write("elsewhere/config.toml", "openai_base_url = \"https://set.example/v1\"\n");
  scratch.set("HOME", scratch.dir());
  scratch.set("CODEX_HOME", nullptr);
  EXPECT_EQ(codex_config_base_urls(), Urls{"https://home.example/v1"});
  scratch.set("CODEX_HOME", scratch.path("elsewhere"));
  EXPECT_EQ(codex_config_base_urls(), Urls{"https://set.example/v1"});
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  ASSERT_EQ(::chown(elsewhere.c_str(), 65534, 65534), 0);
  EXPECT_EQ(codex_config_base_urls(), Urls{});
}

}  // namespace
}  // namespace curlretry::proxy
