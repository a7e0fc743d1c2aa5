// What the launcher reads of Pi's auth.json (proxy/pi_auth.h): which providers are signed in by
// OAuth, and the line for the subscriptions whose host curlretry leaves to the config.
#include "proxy/pi_auth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

using Names = std::vector<std::string>;

TEST(PiAuth, TheProvidersSignedInByOauth) {
  EXPECT_EQ(pi_oauth_providers(R"({"anthropic": {"type": "api_key", "key": "sk-ant-x"},
      "openai-codex": {"refresh": "r", "type": "oauth", "access": "a", "expires": 1765000000000, "accountId": "x"},
      "github-copilot": {"type": "oauth", "refresh": "gho_x", "access": "tid=1;proxy-ep=proxy.individual.githubcopilot.com"},
      "odd": "not an object", "none": {"key": "k"}})"),
            (Names{"openai-codex", "github-copilot"}));
  EXPECT_EQ(pi_oauth_providers(R"({"openai-codex": {"type": "oauth"}} x)"), Names{});
  EXPECT_EQ(pi_oauth_providers(R"({"openai-codex": {"type": 3}})"), Names{});
  EXPECT_EQ(pi_oauth_providers(""), Names{});
}

TEST(PiAuth, ALineForEachSubscriptionWhoseHostNoGlobCovers) {
  testing::Scratch scratch;
  const std::string file =
      scratch.write("auth.json", R"({"openai-codex": {"type": "oauth"}, "github-copilot": {"type": "oauth"}})");
  scratch.set("PI_CODING_AGENT_DIR", scratch.dir());
  const std::string codex =
      "curlretry: proxy: pi is signed in with ChatGPT (" + file +
      "): its requests on that provider (openai-codex) go to chatgpt.com, which curlretry does not "
      "intercept unless told (its Cloudflare may refuse a client other than Codex itself), so none "
      "of them is retried; to retry them, add chatgpt.com to proxy.intercept in your config";
  const std::string copilot = "curlretry: proxy: pi is signed in with GitHub Copilot (" + file +
                              "): its requests on that provider (github-copilot) go to api.*.githubcopilot.com, which "
                              "curlretry does not intercept unless told (curlretry has not been tried with Copilot's "
                              "service), so none of them is retried; to retry them, add *.githubcopilot.com to "
                              "proxy.intercept in your config";
  EXPECT_EQ(pi_signed_in_unretried("/usr/local/bin/pi", {"api.anthropic.com"}), (Names{codex, copilot}));
  EXPECT_EQ(pi_signed_in_unretried("pi", {"chatgpt.com"}), Names{copilot});
  EXPECT_EQ(pi_signed_in_unretried("pi", {"*.githubcopilot.com", "chatgpt.com"}), Names{});
  EXPECT_EQ(pi_signed_in_unretried("codex", {}), Names{});
  if (::geteuid() == 0) {  // another user's file chooses nothing
    ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
    EXPECT_EQ(pi_signed_in_unretried("pi", {}), Names{});
  }
}

}  // namespace
}  // namespace curlretry::proxy
