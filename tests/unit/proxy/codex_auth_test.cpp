// What the launcher reads of Codex's auth.json (proxy/codex_auth.h): signed in with ChatGPT or not,
// and the one line when its model requests would go unretried.
#include "proxy/codex_auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace curlretry::proxy {
namespace {

TEST(CodexAuth, TokensMeanSignedInWithChatgpt) {
  EXPECT_TRUE(codex_signed_in_with_chatgpt(
      R"({"OPENAI_API_KEY": null, "tokens": {"id_token": "a.b.c", "access_token": "x", "account_id": "acct"},
          "last_refresh": "2026-12-07T10:00:00Z"})"));
  EXPECT_TRUE(codex_signed_in_with_chatgpt("\xEF\xBB\xBF{\"auth_mode\": \"chatgpt\", \"tokens\": {}}\n"));
}

TEST(CodexAuth, AnApiKeyOrNoTokensIsNot) {
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"({"OPENAI_API_KEY": "sk-test", "tokens": null})"));
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"({"OPENAI_API_KEY": "sk-test"})"));
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"({"auth_mode": "apikey", "tokens": {"access_token": "x"}})"));
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"({"auth_mode": "ApiKey", "tokens": {}})"));
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"({"nested": {"tokens": {}}})"));
}

TEST(CodexAuth, TextThatIsNotOneJsonObjectIsNot) {
  EXPECT_FALSE(codex_signed_in_with_chatgpt(""));
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"({"tokens": {})"));
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"({"tokens": {}} trailing)"));
  EXPECT_FALSE(codex_signed_in_with_chatgpt(R"(["tokens", {}])"));
}

class CodexHome : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/curlretry-codex-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    const char* old = std::getenv("CODEX_HOME");
    saved_ = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("CODEX_HOME", dir_.c_str(), 1);
    std::ofstream(dir_ + "/auth.json") << R"({"tokens": {"access_token": "x"}})";
  }
  void TearDown() override {
    ::unlink((dir_ + "/auth.json").c_str());
    ::rmdir(dir_.c_str());
    if (saved_) {
      ::setenv("CODEX_HOME", saved_->c_str(), 1);
    } else {
      ::unsetenv("CODEX_HOME");
    }
  }
  std::string dir_;
  std::optional<std::string> saved_;
};

TEST_F(CodexHome, SignedInCodexGetsTheLineUnlessChatgptIsIntercepted) {
  EXPECT_EQ(codex_chatgpt_unretried("/usr/local/bin/codex", {"api.openai.com"}),
            "curlretry: proxy: codex is signed in with ChatGPT (" + dir_ +
                "/auth.json): its model requests go to chatgpt.com, which curlretry does not intercept unless told "
                "(its Cloudflare may refuse a client other than Codex itself), so none of them is retried; to retry "
                "them, add chatgpt.com to proxy.intercept in your config");
  EXPECT_EQ(codex_chatgpt_unretried("codex", {"api.openai.com", "ChatGPT.com"}), "");
  EXPECT_EQ(codex_chatgpt_unretried("codex", {"*.com"}), "");
  EXPECT_EQ(codex_chatgpt_unretried("claude", {}), "");
  EXPECT_EQ(codex_chatgpt_unretried("codex-helper", {}), "");
}

TEST_F(CodexHome, AnAuthFileAnotherUserOwnsIsNotRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  ASSERT_EQ(::chown((dir_ + "/auth.json").c_str(), 65534, 65534), 0);
  EXPECT_EQ(codex_chatgpt_unretried("codex", {}), "");
}

}  // namespace
}  // namespace curlretry::proxy
