// proxy/request_rules: what the proxy accepts of a request's head (RFC 9112 framing), its
// authority and route path, and the token a client presents. The integration tests
// (test_proxy_hostile.py) drive the same rules through a real proxy process.
#include "proxy/request_rules.h"

#include <gtest/gtest.h>

#include <boost/beast/http/field.hpp>
#include <optional>
#include <string>

namespace curlretry::proxy {
namespace {

namespace http = boost::beast::http;

RequestHead head(unsigned version, std::initializer_list<std::pair<std::string, std::string>> fields) {
  RequestHead h;
  h.method(http::verb::post);
  h.target("/r/x");
  h.version(version);
  for (const auto& [name, value] : fields) h.insert(name, value);
  return h;
}

std::optional<int> refusal(const RequestHead& h) {
  auto r = framing_refusal(h);
  return r ? std::optional<int>(r->status) : std::nullopt;
}

TEST(Framing, TransferEncodingMustEndInChunkedAndBeAlone) {
  EXPECT_EQ(refusal(head(11, {{"Host", "x"}, {"Transfer-Encoding", "chunked"}})), std::nullopt);
  EXPECT_EQ(refusal(head(11, {{"Host", "x"}, {"Transfer-Encoding", " Chunked "}})), std::nullopt);
  for (const char* bad : {"xchunked", "identity", "chunked, identity", "chunked;q=1", "", " , "}) {
    EXPECT_EQ(refusal(head(11, {{"Host", "x"}, {"Transfer-Encoding", bad}})), 400) << bad;
  }
  EXPECT_EQ(refusal(head(11, {{"Host", "x"}, {"Transfer-Encoding", "gzip, chunked"}})), 501);
  EXPECT_EQ(refusal(head(11, {{"Host", "x"}, {"Transfer-Encoding", "gzip"}, {"Transfer-Encoding", "chunked"}})), 501);
  EXPECT_EQ(refusal(head(11, {{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Content-Length", "3"}})), 400);
  EXPECT_EQ(refusal(head(10, {{"Transfer-Encoding", "chunked"}})), 400);
}

TEST(Framing, OneHost) {
  EXPECT_EQ(refusal(head(11, {})), 400);
  EXPECT_EQ(refusal(head(11, {{"Host", "a"}, {"Host", "a"}})), 400);
  EXPECT_EQ(refusal(head(10, {})), std::nullopt);
  EXPECT_EQ(refusal(head(10, {{"Host", "a"}, {"Host", "b"}})), 400);
}

TEST(UpstreamHead, EndToEndOnly) {
  const auto h = head(11, {{"Host", "x"},
                           {"Connection", "close, X-Listed"},
                           {"X-Listed", "1"},
                           {"TE", "trailers"},
                           {"Proxy-Authorization", "Bearer t"},
                           {"Content-Length", "3"},
                           {"X-Api-Key", "k"}});
  const auto up = end_to_end_headers(h);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0], (std::pair<std::string, std::string>{"X-Api-Key", "k"}));
}

TEST(RoutePath, DotSegmentsResolvedNeverAboveTheBase) {
  EXPECT_EQ(route_rest("/v1/messages?x=1"), "/v1/messages?x=1");
  EXPECT_EQ(route_rest(""), "");
  EXPECT_EQ(route_rest("?q"), "?q");
  EXPECT_EQ(route_rest("/a//b/"), "/a//b/");
  EXPECT_EQ(route_rest("/a/./b/../c?p=/../"), "/a/c?p=/../");
  EXPECT_EQ(route_rest("/a/.."), "/");
  EXPECT_EQ(route_rest("/a/b/."), "/a/b/");
  EXPECT_EQ(route_rest("/a/%2E%2e/b"), "/b");
  EXPECT_EQ(route_rest("/..."), "/...");  // not a dot-segment
  EXPECT_EQ(route_rest("/.."), std::nullopt);
  EXPECT_EQ(route_rest("/a/../../x"), std::nullopt);
  EXPECT_EQ(route_rest("/.%2e/x"), std::nullopt);
}

TEST(Authority, DnsNamesAndIpLiteralsOnly) {
  auto a = parse_authority("api.example.com:443", 0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "api.example.com");
  EXPECT_EQ(a->port, 443u);
  a = parse_authority("[::1]:8443", 0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(parse_authority("example.com", 80)->port, 80u);
  for (const char* bad : {"example.com", "a.test,DNS:b.test:443", "x.test,IP:10.0.0.1,email:a@b.test:443", "a b:443",
                          "-a.test:443", "a..test:443", "a.test:0", "a.test:65536", "a.test:", "::1:443",
                          "[a.test]:443", "[::1]x", "a_b.test:443", "u@a.test:443", ":443"}) {
    EXPECT_FALSE(parse_authority(bad, 0)) << bad;
  }
  EXPECT_TRUE(valid_host(std::string(63, 'a') + ".test"));
  EXPECT_FALSE(valid_host(std::string(64, 'a') + ".test"));
}

TEST(Forward, LoopbackLiteralsAndPorts) {
  for (const char* host : {"127.0.0.1", "127.9.9.9", "::1", "0.0.0.0", "::", "::ffff:127.0.0.1", "localhost",
                           "LocalHost.", "a.localhost"}) {
    EXPECT_TRUE(loopback_host(host)) << host;
  }
  for (const char* host : {"10.0.0.1", "::2", "example.com", "localhost.example", "128.0.0.1"}) {
    EXPECT_FALSE(loopback_host(host)) << host;
  }
  config::ProxyForward forward;
  EXPECT_TRUE(port_allowed(forward, 443));
  EXPECT_FALSE(port_allowed(forward, 8443));
  forward.allow_ports.clear();
  EXPECT_TRUE(port_allowed(forward, 8443));
}

TEST(Token, BearerAnyCaseAndBasicPassword) {
  EXPECT_EQ(presented_token("Bearer abc"), "abc");
  EXPECT_EQ(presented_token("bEaReR   abc"), "abc");
  EXPECT_EQ(presented_token("Basic dXNlcjpzM2NyZXQ6eA=="), "s3cret:x");  // user:s3cret:x
  EXPECT_EQ(presented_token("basic OnRva2Vu"), "token");                 // :token
  EXPECT_EQ(presented_token("Basic dXNlcg=="), "");                      // no ':'
  EXPECT_EQ(presented_token("Basic !!!!"), "");
  EXPECT_EQ(presented_token("Digest abc"), "");
  EXPECT_EQ(presented_token("abc"), "");
  EXPECT_TRUE(same_secret("abc", "abc"));
  EXPECT_FALSE(same_secret("abd", "abc"));
  EXPECT_FALSE(same_secret("abcd", "abc"));
  EXPECT_FALSE(same_secret("", "abc"));
}

}  // namespace
}  // namespace curlretry::proxy
