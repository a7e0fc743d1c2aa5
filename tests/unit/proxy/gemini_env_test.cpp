// What the launcher reads of the .env file Gemini CLI loads (proxy/gemini_env.h): which file, and
// its lines as the dotenv package reads them.
#include "proxy/gemini_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace curlretry::proxy {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(Dotenv, LinesAsTheDotenvPackageReadsThem) {
  EXPECT_EQ(
      dotenv_values("# a comment\nGEMINI_API_KEY=abc\n  export GOOGLE_GEMINI_BASE_URL = https://gw.example/v1  # mine\n"
                    "QUOTED=\"a # b\\nc\"\nSINGLE='x\\ny'\nBACK=`z`\nCOLON: v\nnot a variable\nEMPTY=\n"),
      (Pairs{{"GEMINI_API_KEY", "abc"},
             {"GOOGLE_GEMINI_BASE_URL", "https://gw.example/v1"},
             {"QUOTED", "a # b\nc"},
             {"SINGLE", "x\\ny"},
             {"BACK", "z"},
             {"COLON", "v"},
             {"EMPTY", ""}}));
  EXPECT_EQ(dotenv_values("A=1\r\nB=\"two\r\nlines\"\r\nC=3"), (Pairs{{"A", "1"}, {"B", "two\r\nlines"}, {"C", "3"}}));
  EXPECT_EQ(dotenv_values(""), Pairs{});
  EXPECT_EQ(dotenv_values("=novalue\n:\n\"\n"), Pairs{});
}

class EnvFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("HOME");
    saved_ = old ? std::optional<std::string>(old) : std::nullopt;
    char dir[] = "/tmp/curlretry-gemini-env-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    std::filesystem::create_directories(dir_ + "/home/.gemini");
    std::filesystem::create_directories(dir_ + "/work/project/src");
    ::setenv("HOME", (dir_ + "/home").c_str(), 1);
  }
  void TearDown() override {
    saved_ ? ::setenv("HOME", saved_->c_str(), 1) : ::unsetenv("HOME");
    std::filesystem::remove_all(dir_);
  }
  void write(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  std::string dir_;
  std::optional<std::string> saved_;
};

TEST_F(EnvFiles, TheFirstFoundUpTheTreeThenHome) {
  const std::string src = dir_ + "/work/project/src";
  EXPECT_EQ(gemini_env_file(src), "");
  write(dir_ + "/home/.env", "A=1\n");
  EXPECT_EQ(gemini_env_file(src), dir_ + "/home/.env");
  write(dir_ + "/home/.gemini/.env", "A=1\n");
  EXPECT_EQ(gemini_env_file(src), dir_ + "/home/.gemini/.env");
  write(dir_ + "/work/.env", "A=1\n");
  EXPECT_EQ(gemini_env_file(src), dir_ + "/work/.env");
  std::filesystem::create_directories(dir_ + "/work/project/.gemini");
  write(dir_ + "/work/project/.gemini/.env", "A=1\n");
  EXPECT_EQ(gemini_env_file(src), dir_ + "/work/project/.gemini/.env");
}

TEST_F(EnvFiles, TheNamedValuesTheEnvironmentLacks) {
  write(dir_ + "/home/.gemini/.env",
        "GEMINI_API_KEY=k\nGOOGLE_GEMINI_BASE_URL=https://gw.example\nCODE_ASSIST_ENDPOINT=https://ca\n");
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir_ + "/work/project/src");
  const char* old = std::getenv("CODE_ASSIST_ENDPOINT");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::unsetenv("GOOGLE_GEMINI_BASE_URL");
  ::setenv("CODE_ASSIST_ENDPOINT", "https://set.example", 1);  // Gemini CLI keeps the environment's
  EXPECT_EQ(gemini_env_values({"GOOGLE_GEMINI_BASE_URL", "CODE_ASSIST_ENDPOINT"}),
            std::vector<std::string>{"https://gw.example"});
  if (::geteuid() == 0) {  // another user's file chooses nothing
    ASSERT_EQ(::chown((dir_ + "/home/.gemini/.env").c_str(), 65534, 65534), 0);
    EXPECT_EQ(gemini_env_values({"GOOGLE_GEMINI_BASE_URL"}), std::vector<std::string>{});
  }
  saved ? ::setenv("CODE_ASSIST_ENDPOINT", saved->c_str(), 1) : ::unsetenv("CODE_ASSIST_ENDPOINT");
  std::filesystem::current_path(before);
}

}  // namespace
}  // namespace curlretry::proxy
