// What the launcher reads of Pi's models.json (proxy/pi_models.h): each provider's baseUrl, read
// as Pi reads the file (its `//` comments and trailing commas), nothing from text Pi would refuse.
#include "proxy/pi_models.h"

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

TEST(PiModels, EachProvidersBaseUrl) {
  EXPECT_EQ(pi_provider_base_urls(R"({"providers": {
      "ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "models": [{"id": "q"}]},
      "company": {"api": "anthropic-messages", "baseUrl": "https:\/\/llm.corp.example/anthropic"},
      "anthropic": {"baseUrl": "https://gw.example", "modelOverrides": {"x": {"baseUrl": "https://no.example"}}}}})"),
            (Urls{"http://localhost:11434/v1", "https://llm.corp.example/anthropic", "https://gw.example"}));
}

TEST(PiModels, CommentsAndTrailingCommasAsPiAllowsThem) {
  // Pi strips `//` comments and commas before a closing bracket, never inside a string.
  EXPECT_EQ(pi_provider_base_urls("{\n  // my gateway\n  \"providers\": {\n    \"gw\": {\n"
                                  "      \"baseUrl\": \"https://gw.example//v1\", // the path has two slashes\n"
                                  "      \"models\": [{\"id\": \"a\",},],\n    },\n  },\n}\n"),
            Urls{"https://gw.example//v1"});
  EXPECT_EQ(pi_strip_jsonc(R"({"a": "x,}", "b": [1, 2 , ], "c": "//", } )"),
            R"({"a": "x,}", "b": [1, 2  ], "c": "//" } )");
  EXPECT_EQ(pi_strip_jsonc("[1, // two\n]"), "[1 \n]");
  EXPECT_EQ(pi_strip_jsonc(R"(["a\"//b", 1])"), R"(["a\"//b", 1])");
}

TEST(PiModels, NothingFromAFilePiWouldRefuseOrFromElsewhere) {
  EXPECT_EQ(pi_provider_base_urls(R"({"providers": {"gw": {"baseUrl": "https://gw"}}} x)"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(R"(/* block */ {"providers": {"gw": {"baseUrl": "https://gw"}}})"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(R"({"providers": {"gw": {"baseUrl": 3}, "x": "y", "z": null}})"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(R"({"other": {"gw": {"baseUrl": "https://no"}}})"), Urls{});
  EXPECT_EQ(pi_provider_base_urls(std::string(100, '{')), Urls{});
  EXPECT_EQ(pi_provider_base_urls(""), Urls{});
}

// HOME and PI_CODING_AGENT_DIR set for one test and put back after it.
class AgentDir : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HOME", "PI_CODING_AGENT_DIR"}) {
      const char* old = std::getenv(name);
      saved_.push_back(old ? std::optional<std::string>(old) : std::nullopt);
    }
    char dir[] = "/tmp/curlretry-pi-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    const char* names[] = {"HOME", "PI_CODING_AGENT_DIR"};
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

TEST_F(AgentDir, HomesPiAgentOrTheVariablesDirectory) {
  std::filesystem::create_directories(dir_ + "/.pi/agent");
  std::filesystem::create_directories(dir_ + "/elsewhere");
  write(dir_ + "/.pi/agent/models.json", R"({"providers": {"a": {"baseUrl": "https://home.example"}}})");
  write(dir_ + "/elsewhere/models.json", R"({"providers": {"a": {"baseUrl": "https://set.example"}}})");
  ::setenv("HOME", dir_.c_str(), 1);
  ::unsetenv("PI_CODING_AGENT_DIR");
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://home.example"});
  ::setenv("PI_CODING_AGENT_DIR", "~/elsewhere", 1);  // Pi expands a leading ~/ itself
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://set.example"});
  ::setenv("PI_CODING_AGENT_DIR", (dir_ + "/elsewhere").c_str(), 1);
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://set.example"});
  ::setenv("PI_CODING_AGENT_DIR", (dir_ + "/none").c_str(), 1);
  EXPECT_EQ(pi_models_base_urls(), Urls{});
}

TEST_F(AgentDir, AFileAnotherUserOwnsIsNotRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  write(dir_ + "/models.json", R"({"providers": {"a": {"baseUrl": "https://theirs.example"}}})");
  ::setenv("PI_CODING_AGENT_DIR", dir_.c_str(), 1);
  EXPECT_EQ(pi_models_base_urls(), Urls{"https://theirs.example"});  // root's own
  ASSERT_EQ(::chown((dir_ + "/models.json").c_str(), 65534, 65534), 0);
  EXPECT_EQ(pi_models_base_urls(), Urls{});
}

}  // namespace
}  // namespace curlretry::proxy
