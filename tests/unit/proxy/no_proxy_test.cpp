// The NO_PROXY a launched COMMAND gets (proxy/no_proxy.h): what covers an intercepted host.
#include "proxy/no_proxy.h"

#include <gtest/gtest.h>

namespace curlretry::proxy {
namespace {

TEST(NoProxyEntry, CoversAHostAndTheNamesBelowIt) {
  EXPECT_TRUE(entry_covers("*", "api.anthropic.com"));
  EXPECT_TRUE(entry_covers("api.anthropic.com", "api.anthropic.com"));
  EXPECT_TRUE(entry_covers("API.Anthropic.COM:443", "api.anthropic.com"));
  EXPECT_TRUE(entry_covers("anthropic.com", "api.anthropic.com"));
  EXPECT_TRUE(entry_covers(".anthropic.com", "api.anthropic.com"));
  EXPECT_TRUE(entry_covers("*.anthropic.com", "api.anthropic.com"));
  EXPECT_TRUE(entry_covers(" anthropic.com\t", "api.anthropic.com"));
  EXPECT_FALSE(entry_covers("thropic.com", "api.anthropic.com"));
  EXPECT_FALSE(entry_covers("console.anthropic.com", "api.anthropic.com"));
  EXPECT_FALSE(entry_covers("api.anthropic.com.evil", "api.anthropic.com"));
  EXPECT_FALSE(entry_covers("", "api.anthropic.com"));
  EXPECT_FALSE(entry_covers(".", "api.anthropic.com"));
}

TEST(NoProxyEntry, AgainstAGlobOneOfItsHostsOrADomainAboveItsSuffix) {
  EXPECT_TRUE(entry_covers("api.openai.com", "*.openai.com"));
  EXPECT_TRUE(entry_covers(".openai.com", "*.openai.com"));
  EXPECT_TRUE(entry_covers("openai.com", "*.openai.com"));
  EXPECT_TRUE(entry_covers("com", "*.openai.com"));
  EXPECT_FALSE(entry_covers("example.com", "*.openai.com"));
  EXPECT_FALSE(entry_covers("notopenai.com", "*.openai.com"));
}

TEST(CommandNoProxy, LoopbackAddedCoveringEntriesDroppedOrKept) {
  config::ProxySettings proxy;
  proxy.intercept = {"api.anthropic.com"};
  const CommandNoProxy dropped = command_no_proxy("internal.example *  .anthropic.com,localhost", proxy, true);
  EXPECT_EQ(dropped.value, "internal.example,localhost,127.0.0.1,::1");
  EXPECT_EQ(dropped.covering, (std::vector<std::string>{"*", ".anthropic.com"}));
  const CommandNoProxy kept = command_no_proxy("internal.example *  .anthropic.com,localhost", proxy, false);
  EXPECT_EQ(kept.value, "internal.example,*,.anthropic.com,localhost,127.0.0.1,::1");
  EXPECT_EQ(kept.covering, dropped.covering);
  EXPECT_EQ(command_no_proxy(nullptr, proxy, true).value, "localhost,127.0.0.1,::1");
}

TEST(CommandNoProxy, AnInterceptedLoopbackHostOnlyWhenTheProxyMayReachIt) {
  config::ProxySettings proxy;
  proxy.intercept = {"127.0.0.1"};
  // Without allow_loopback the proxy refuses it: it stays direct.
  EXPECT_EQ(command_no_proxy("127.0.0.1", proxy, true).value, "127.0.0.1,localhost,::1");
  proxy.forward.allow_loopback = true;
  const CommandNoProxy out = command_no_proxy("127.0.0.1:8443", proxy, true);
  EXPECT_EQ(out.value, "localhost,::1");
  EXPECT_EQ(out.covering, (std::vector<std::string>{"127.0.0.1:8443"}));
}

TEST(CommandNoProxy, EveryLoopbackNameStaysDirectWhenTheProxyMayNotReachIt) {
  // `intercept: ["*"]` covers a local dev server's name too; the proxy refuses loopback without
  // allow_loopback, so dropping its NO_PROXY entry would make that server unreachable.
  config::ProxySettings proxy;
  proxy.intercept = {"*"};
  const CommandNoProxy out = command_no_proxy("app.localhost,127.0.0.2,[::1]:3000,0.0.0.0,.anthropic.com", proxy, true);
  EXPECT_EQ(out.value, "app.localhost,127.0.0.2,[::1]:3000,0.0.0.0,localhost,127.0.0.1");
  EXPECT_EQ(out.covering, (std::vector<std::string>{".anthropic.com"}));
}

}  // namespace
}  // namespace curlretry::proxy
