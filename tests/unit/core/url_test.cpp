// The one URL splitter (rule matching, `explain`, the shim's log lines): the authority is read as
// libcurl's URL parser reads it, and no secret survives the split.
#include "core/url.h"

#include <gtest/gtest.h>

namespace curlretry::core {
namespace {

TEST(Url, SplitsHostAndPathWithoutSecrets) {
  auto u = split_url("https://user:pw@Open.BigModel.cn:8443/api/paas/v4/chat?key=secret#frag");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "open.bigmodel.cn");
  EXPECT_EQ(u->port, "8443");
  EXPECT_EQ(u->path, "/api/paas/v4/chat");
  EXPECT_EQ(u->host_path(), "open.bigmodel.cn/api/paas/v4/chat");
  EXPECT_EQ(u->display(), "open.bigmodel.cn:8443/api/paas/v4/chat");
}

TEST(Url, EdgeCases) {
  EXPECT_EQ(split_url("example.com")->path, "/");
  EXPECT_EQ(split_url("example.com")->scheme, "http");
  EXPECT_EQ(split_url("HTTP://example.com/")->scheme, "http");
  EXPECT_EQ(split_url("http://example.com?x=1")->path, "/");
  EXPECT_EQ(split_url("http://example.com#f")->path, "/");
  EXPECT_EQ(split_url("http://[::1]:8080/x")->host, "::1");
  EXPECT_EQ(split_url("http://[::1]:8080/x")->display(), "[::1]:8080/x");
  EXPECT_EQ(split_url("http://[::1]/x")->port, "");
  EXPECT_EQ(split_url("http://api.z.ai./x")->host, "api.z.ai");
  EXPECT_FALSE(split_url(""));
  EXPECT_FALSE(split_url("http:///x"));
  EXPECT_FALSE(split_url("/just/a/path"));
  EXPECT_FALSE(split_url("http://[::1/x"));
}

// curl (Curl_parse_port) takes the port after the FIRST colon and refuses one that is not a
// decimal number up to 65535: `curl http://a:b:c/x` fails with "(3) URL using bad/illegal format".
// The splitter refuses it too, rather than matching rules by a host curl never connects to.
TEST(Url, PortIsReadAsCurlReadsIt) {
  std::string why;
  EXPECT_FALSE(split_url("http://a:b:c/x", &why));
  EXPECT_EQ(why, "has a port that is not a number from 0 to 65535");
  EXPECT_FALSE(split_url("http://a:8080:1/x"));
  EXPECT_FALSE(split_url("http://a:65536/x"));
  EXPECT_FALSE(split_url("http://a:-1/x"));
  EXPECT_EQ(split_url("http://a:65535/x")->port, "65535");
  EXPECT_EQ(split_url("http://a:0/x")->port, "0");
  EXPECT_EQ(split_url("http://a:008080/x")->port, "008080");
  // A colon with nothing after it is the default port, as curl and browsers read it.
  EXPECT_EQ(split_url("http://a:/x")->host, "a");
  EXPECT_EQ(split_url("http://a:/x")->port, "");
}

// Userinfo ends at the first '@' (curl's parse_hostname_login): an unencoded '@' in a password
// leaves a host curl refuses, and so no part of that password can reach a log line as a "host".
TEST(Url, UserinfoEndsAtTheFirstAt) {
  std::string why;
  EXPECT_FALSE(split_url("http://user:p@ss@host/x", &why));
  EXPECT_EQ(why, "has a character curl refuses in its host");
  EXPECT_EQ(split_url("http://user:p%40ss@host/x")->host, "host");
}

TEST(Url, RefusesWhatCurlRefuses) {
  std::string why;
  EXPECT_FALSE(split_url("http://[::1]x/", &why));
  EXPECT_EQ(why, "has a malformed IPv6 address");
  EXPECT_FALSE(split_url("http://a!b/"));
  EXPECT_FALSE(split_url("http://a b/"));
  EXPECT_FALSE(split_url("/no/host", &why));
  EXPECT_EQ(why, "has no host");
  // What curl accepts stays accepted.
  EXPECT_EQ(split_url("http://a_b.example/")->host, "a_b.example");
  EXPECT_EQ(split_url("http://A~b.example/")->host, "a~b.example");
}

}  // namespace
}  // namespace curlretry::core
