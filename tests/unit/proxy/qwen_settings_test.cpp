// What the launcher reads of Qwen Code's own files (proxy/qwen_settings.h): the providers its
// settings.json files declare, which files those are, and the base-URL variables its .env files and
// settings' `env` blocks set.
#include "proxy/qwen_settings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

using Urls = std::vector<std::string>;
using Files = std::vector<std::string>;

TEST(QwenSettings, EachModelsBaseUrlInFileOrder) {
  // The docs' Coding Plan setup, a gateway, and entries without a baseUrl (qwen's default host).
  EXPECT_EQ(qwen_provider_base_urls(R"({
      "modelProviders": {
        "openai": [{"id": "qwen3-coder-plus", "baseUrl": "https://coding.dashscope.aliyuncs.com/v1",
                    "generationConfig": {"baseUrl": "https://not.a.provider"}},
                   {"id": "gpt-4o"}, "not an entry"],
        "anthropic": [{"id": "c", "baseUrl": "https:\/\/gw.example/anthropic"}],
        "gemini": {"baseUrl": "https://not.an.array"}},
      "baseUrl": "https://not.in.modelProviders"})"),
            (Urls{"https://coding.dashscope.aliyuncs.com/v1", "https://gw.example/anthropic"}));
}

TEST(QwenSettings, CommentsAsQwenStripsThemAndNothingFromAFileItRefuses) {
  EXPECT_EQ(qwen_provider_base_urls("/* mine */ {\"modelProviders\": {\"openai\": [\n"
                                    "  {\"baseUrl\": \"https://gw.example//v1\"} // two slashes\n]}}"),
            Urls{"https://gw.example//v1"});
  EXPECT_EQ(qwen_provider_base_urls(R"({"modelProviders": {"openai": [{"baseUrl": "https://gw"},]}})"), Urls{});
  EXPECT_EQ(qwen_provider_base_urls(R"({"modelProviders": {"openai": [{"baseUrl": "https://gw"}]}} x)"), Urls{});
  EXPECT_EQ(qwen_provider_base_urls(R"([{"modelProviders": {}}])"), Urls{});
  EXPECT_EQ(qwen_provider_base_urls(""), Urls{});
}

class QwenFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = std::filesystem::current_path();
    work_ = scratch_.path("work/project");
    std::filesystem::create_directories(work_);
    std::filesystem::current_path(work_);
    scratch_.set("HOME", scratch_.path("home"));
    for (const char* name : {"QWEN_HOME", "QWEN_CODE_SYSTEM_SETTINGS_PATH", "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
                             "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"}) {
      scratch_.set(name, nullptr);
    }
  }
  void TearDown() override { std::filesystem::current_path(before_); }

  testing::Scratch scratch_;
  std::filesystem::path before_;
  std::string work_;
};

TEST_F(QwenFiles, SettingsFilesInQwensOrder) {
  EXPECT_EQ(qwen_settings_files(),
            (Files{"/etc/qwen-code/system-defaults.json", scratch_.path("home/.qwen/settings.json"),
                   work_ + "/.qwen/settings.json", "/etc/qwen-code/settings.json"}));
  scratch_.set("QWEN_HOME", "~/qwen-config");
  scratch_.set("QWEN_CODE_SYSTEM_SETTINGS_PATH", "/opt/qwen/settings.json");
  scratch_.set("QWEN_CODE_SYSTEM_DEFAULTS_PATH", "/opt/qwen/defaults.json");
  EXPECT_EQ(qwen_settings_files(), (Files{"/opt/qwen/defaults.json", scratch_.path("home/qwen-config/settings.json"),
                                          work_ + "/.qwen/settings.json", "/opt/qwen/settings.json"}));
  // In HOME, the workspace's file is the user's own: not read twice.
  std::filesystem::create_directories(scratch_.path("home"));
  std::filesystem::current_path(scratch_.path("home"));
  scratch_.set("QWEN_HOME", nullptr);
  EXPECT_EQ(qwen_settings_files()[2], "/opt/qwen/settings.json");
}

TEST_F(QwenFiles, EnvFilesUpTheTreeThenHome) {
  const Files files = qwen_env_files();
  ASSERT_GE(files.size(), 4u);
  EXPECT_EQ(
      Files(files.begin(), files.begin() + 4),
      (Files{work_ + "/.qwen/.env", work_ + "/.env", scratch_.path("work/.qwen/.env"), scratch_.path("work/.env")}));
  EXPECT_EQ(Files(files.end() - 2, files.end()), (Files{scratch_.path("home/.qwen/.env"), scratch_.path("home/.env")}));
}

TEST_F(QwenFiles, ProvidersAndVariablesWithTheFileEachCameFrom) {
  const std::string user = scratch_.write(
      "home/.qwen/settings.json",
      R"({"modelProviders": {"openai": [{"id": "m", "baseUrl": "https://coding-intl.dashscope.aliyuncs.com/v1"}]},
          "env": {"ANTHROPIC_BASE_URL": "https://settings-gw.example", "BAILIAN_CODING_PLAN_API_KEY": "sk-sp-x"}})");
  const std::string env =
      scratch_.write("home/.qwen/.env", "OPENAI_BASE_URL=https://env-gw.example/v1\nOPENAI_API_KEY=k\n");
  const std::vector<SettingsValue> got = qwen_settings_values({"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ((std::vector<std::string>{got[0].name, got[0].value, got[0].file}),
            (std::vector<std::string>{"", "https://coding-intl.dashscope.aliyuncs.com/v1", user}));
  EXPECT_EQ((std::vector<std::string>{got[1].name, got[1].value, got[1].file}),
            (std::vector<std::string>{"ANTHROPIC_BASE_URL", "https://settings-gw.example", user}));
  EXPECT_EQ((std::vector<std::string>{got[2].name, got[2].value, got[2].file}),
            (std::vector<std::string>{"OPENAI_BASE_URL", "https://env-gw.example/v1", env}));
  // A variable the environment sets stays the environment's: qwen loads neither file's value.
  scratch_.set("OPENAI_BASE_URL", "https://mine.example");
  scratch_.set("ANTHROPIC_BASE_URL", "https://mine.example");
  EXPECT_EQ(qwen_settings_values({"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"}).size(), 1u);
}

}  // namespace
}  // namespace curlretry::proxy
