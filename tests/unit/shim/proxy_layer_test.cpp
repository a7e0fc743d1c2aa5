// shim/proxy_layer: which transfers of a proxied command's libcurl children the proxy has already
// retried (test_launcher_proxy.py counts the upstream requests of the real thing).
#include "shim/proxy_layer.h"

#include <gtest/gtest.h>

namespace curlretry::shim {
namespace {

UrlParts url(const char* text) { return split_url(text); }

TEST(ProxyLayer, EveryPlainHttpRequestToTheProxyWasRetriedThere) {
  EXPECT_TRUE(retried_by_proxy("127.0.0.1:7878", "", "127.0.0.1", 7878, url("http://127.0.0.1:7878/flaky/x")));
  // A forward (absolute-form) request: the connection went to the proxy, the URL names the origin.
  EXPECT_TRUE(retried_by_proxy("127.0.0.1:7878", "", "127.0.0.1", 7878, url("http://example.com/x")));
}

TEST(ProxyLayer, HttpsOnlyForAnInterceptedHost) {
  const char* globs = "api.anthropic.com,*.openai.com";
  EXPECT_TRUE(retried_by_proxy("127.0.0.1:7878", globs, "127.0.0.1", 7878, url("https://api.anthropic.com/v1")));
  EXPECT_TRUE(retried_by_proxy("127.0.0.1:7878", globs, "127.0.0.1", 7878, url("https://API.openai.com/v1")));
  // A blind tunnel: nothing in it was retried, so the preload still is the one layer.
  EXPECT_FALSE(retried_by_proxy("127.0.0.1:7878", globs, "127.0.0.1", 7878, url("https://example.com/")));
  EXPECT_FALSE(retried_by_proxy("127.0.0.1:7878", "", "127.0.0.1", 7878, url("https://api.anthropic.com/v1")));
}

TEST(ProxyLayer, AnotherAddressIsNotTheProxy) {
  EXPECT_FALSE(retried_by_proxy("127.0.0.1:7878", "", "127.0.0.1", 8080, url("http://127.0.0.1:8080/x")));
  EXPECT_FALSE(retried_by_proxy("127.0.0.1:7878", "", "127.0.0.2", 7878, url("http://127.0.0.2:7878/x")));
  EXPECT_FALSE(retried_by_proxy("", "", "127.0.0.1", 7878, url("http://127.0.0.1:7878/x")));
  EXPECT_FALSE(retried_by_proxy("127.0.0.1:7878", "", "", 0, url("http://127.0.0.1:7878/x")));
  EXPECT_TRUE(retried_by_proxy("::1:7878", "", "::1", 7878, url("http://[::1]:7878/r/x")));
}

}  // namespace
}  // namespace curlretry::shim
