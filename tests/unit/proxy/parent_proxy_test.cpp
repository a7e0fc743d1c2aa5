// proxy.upstream_proxy as the proxy's tunnels use it: libcurl's reading of the URL, the default
// port, and the Basic credentials decoded from it.
#include "proxy/parent_proxy.h"

#include <gtest/gtest.h>

namespace curlretry::proxy {
namespace {

TEST(ParentProxy, HostPortAndDecodedBasicCredentials) {
  const auto parent = parent_proxy("http://us%40er:p%3Ass@proxy.corp:3128/");
  ASSERT_TRUE(parent);
  EXPECT_EQ(parent->host, "proxy.corp");
  EXPECT_EQ(parent->port, "3128");
  // base64("us@er:p:ss"): the percent-escapes decoded, as libcurl sends them.
  EXPECT_EQ(parent->authorization, "Basic dXNAZXI6cDpzcw==");
}

TEST(ParentProxy, NoSchemeNoPortNoCredentialsAndIpv6) {
  const auto bare = parent_proxy("proxy.corp");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->host, "proxy.corp");
  EXPECT_EQ(bare->port, "1080");  // libcurl's default proxy port, not http's 80
  EXPECT_EQ(bare->authorization, "");
  const auto v6 = parent_proxy("http://[::1]:8888");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "8888");
  EXPECT_FALSE(parent_proxy(""));
}

}  // namespace
}  // namespace curlretry::proxy
