// What the launcher reads of the .env file Gemini CLI loads (proxy/gemini_env.h): which file, and
// its lines as the dotenv package reads them.
#include "proxy/gemini_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/proxy/scratch.h"

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

TEST(EnvFiles, TheFirstFoundUpTheTreeThenHome) {
  testing::Scratch scratch;
  scratch.set("HOME", scratch.path("home"));
  const std::string src = scratch.path("work/project/src");
  std::filesystem::create_directories(src);
  EXPECT_EQ(gemini_env_file(src), "");
  for (const char* file : {"home/.env", "home/.gemini/.env", "work/.env", "work/project/.gemini/.env"}) {
    scratch.write(file, "A=1\n");
    EXPECT_EQ(gemini_env_file(src), scratch.path(file));
  }
}

TEST(EnvFiles, TheNamedValuesTheEnvironmentLacks) {
  testing::Scratch scratch;
  const std::string file =
      scratch.write("home/.gemini/.env",
                    "GEMINI_API_KEY=k\nGOOGLE_GEMINI_BASE_URL=https://gw.example\nCODE_ASSIST_ENDPOINT=https://ca\n");
  std::filesystem::create_directories(scratch.path("work"));
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(scratch.path("work"));
  scratch.set("HOME", scratch.path("home"));
  scratch.set("GOOGLE_GEMINI_BASE_URL", nullptr);
  scratch.set("CODE_ASSIST_ENDPOINT", "https://set.example");  // Gemini CLI keeps the environment's
  const std::vector<SettingsValue> values = gemini_env_values({"GOOGLE_GEMINI_BASE_URL", "CODE_ASSIST_ENDPOINT"});
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].name, "GOOGLE_GEMINI_BASE_URL");
  EXPECT_EQ(values[0].value, "https://gw.example");
  EXPECT_EQ(values[0].file, file);
  if (::geteuid() == 0) {  // another user's file chooses nothing
    ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
    EXPECT_TRUE(gemini_env_values({"GOOGLE_GEMINI_BASE_URL"}).empty());
  }
  std::filesystem::current_path(before);
}

}  // namespace
}  // namespace curlretry::proxy
