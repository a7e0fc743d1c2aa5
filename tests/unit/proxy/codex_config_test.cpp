// What the launcher reads of Codex's config.toml (proxy/codex_config.h): the built-in provider's
// openai_base_url and each declared provider's base_url, nothing from text that is not TOML.
#include "proxy/codex_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

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

// HOME and CODEX_HOME set for one test and put back after it.
class CodexHomeDir : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HOME", "CODEX_HOME"}) {
      const char* old = std::getenv(name);
      saved_.push_back(old ? std::optional<std::string>(old) : std::nullopt);
    }
    char dir[] = "/tmp/curlretry-codex-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    const char* names[] = {"HOME", "CODEX_HOME"};
    for (std::size_t i = 0; i < saved_.size(); ++i) {
      saved_[i] ? ::setenv(names[i], saved_[i]->c_str(), 1) : ::unsetenv(names[i]);
    }
    std::filesystem::remove_all(dir_);
  }
  void write(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  std::string dir_;
  std::vector<std::optional<std::string>> saved_;
};

TEST_F(CodexHomeDir, HomesCodexOrCodexHome) {
  std::filesystem::create_directories(dir_ + "/.codex");
  std::filesystem::create_directories(dir_ + "/elsewhere");
  write(dir_ + "/.codex/config.toml", "openai_base_url = \"https://home.example/v1\"\n");
  write(dir_ + "/elsewhere/config.toml", "openai_base_url = \"https://set.example/v1\"\n");
  ::setenv("HOME", dir_.c_str(), 1);
  ::unsetenv("CODEX_HOME");
  EXPECT_EQ(codex_config_base_urls(), Urls{"https://home.example/v1"});
  ::setenv("CODEX_HOME", (dir_ + "/elsewhere").c_str(), 1);
  EXPECT_EQ(codex_config_base_urls(), Urls{"https://set.example/v1"});
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  ASSERT_EQ(::chown((dir_ + "/elsewhere/config.toml").c_str(), 65534, 65534), 0);
  EXPECT_EQ(codex_config_base_urls(), Urls{});
}

}  // namespace
}  // namespace curlretry::proxy
