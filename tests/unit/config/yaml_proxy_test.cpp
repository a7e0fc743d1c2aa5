// The `proxy:` section: routes, token, body bound; every mistake names file:line:col and the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_env.h"

namespace curlretry::config {
namespace {

using testing::error_of;
using testing::load_yaml;

TEST(YamlProxy, RoutesTokenAndBodyBound) {
  const LoadResult r = load_yaml(
      "version: 1\nproxy:\n  token: \"0123456789abcdef0\"\n  max_body_bytes: 1024\n  routes:\n"
      "    anthropic: {upstream: \"https://api.anthropic.com/\", env: ANTHROPIC_BASE_URL}\n"
      "    local: {upstream: \"http://127.0.0.1:8080/api\"}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const ProxySettings& p = r.config->proxy;
  EXPECT_EQ(p.token, "0123456789abcdef0");
  EXPECT_EQ(p.max_body, 1024u);
  ASSERT_EQ(p.routes.size(), 2u);
  EXPECT_EQ(p.routes[0].name, "anthropic");
  EXPECT_EQ(p.routes[0].upstream, "https://api.anthropic.com");  // the trailing '/' goes
  EXPECT_EQ(p.routes[0].env, "ANTHROPIC_BASE_URL");
  EXPECT_EQ(p.routes[1].upstream, "http://127.0.0.1:8080/api");
  EXPECT_EQ(p.routes[1].env, "");
}

TEST(YamlProxy, NoSectionMeansNoRoutes) {
  const LoadResult r = load_yaml("version: 1\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config->proxy.routes.empty());
  EXPECT_EQ(r.config->proxy.max_body, ProxySettings{}.max_body);
}

TEST(YamlProxy, InterceptGlobsAndUpstreamCa) {
  const LoadResult r = load_yaml(
      "version: 1\nproxy:\n  intercept: [\"api.anthropic.com\", \"*.openai.com\", \"127.0.0.1\", \"::1\"]\n"
      "  upstream_ca_file: /etc/private-ca.pem\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const ProxySettings& p = r.config->proxy;
  EXPECT_EQ(p.intercept, (std::vector<std::string>{"api.anthropic.com", "*.openai.com", "127.0.0.1", "::1"}));
  EXPECT_EQ(p.upstream_ca_file, "/etc/private-ca.pem");
  EXPECT_TRUE(load_yaml("version: 1\n").config->proxy.intercept.empty());
}

TEST(YamlProxy, InterceptMistakes) {
  EXPECT_EQ(error_of("version: 1\nproxy:\n  intercept: api.anthropic.com\n"),
            "test.yaml:3:14: proxy.intercept: a list of host globs, e.g. [\"api.anthropic.com\", \"*.openai.com\"]");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  intercept: [\"ok.example\", \"api.example:443\"]\n"),
            "test.yaml:3:29: proxy.intercept[1]: \"api.example:443\" is not a host glob (no scheme, port, path or "
            "spaces)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  intercept:\n    - \"https://x\"\n"),
            "test.yaml:4:7: proxy.intercept[0]: \"https://x\" is not a host glob (no scheme, port, path or spaces)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  intercept: [\"[a-\"]\n"),
            "test.yaml:3:15: proxy.intercept[0]: bad glob \"[a-\": unclosed '[' at offset 0");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  upstream_ca_file: ca.pem\n"),
            "test.yaml:3:21: proxy.upstream_ca_file: an absolute path to a PEM file of extra CA certificates");
}

// proxy.upstream_proxy and CURLRETRY_UPSTREAM_PROXY: an http:// proxy (credentials allowed), the
// variable over the file, and a mistake named without the URL, which may carry a password.
TEST(YamlProxy, UpstreamProxyFromTheFileOrTheEnvironment) {
  EXPECT_EQ(load_yaml("version: 1\n").config->proxy.upstream_proxy, "");
  const std::string file = "version: 1\nproxy:\n  upstream_proxy: http://u:p%40ss@proxy.corp:3128/\n";
  EXPECT_EQ(load_yaml(file).config->proxy.upstream_proxy, "http://u:p%40ss@proxy.corp:3128/");
  testing::FakeEnv env;
  env.vars["CURLRETRY_UPSTREAM_PROXY"] = "proxy.corp:8080";  // no scheme: http://, as curl reads it
  EXPECT_EQ(load_yaml(file, env).config->proxy.upstream_proxy, "proxy.corp:8080");
  env.vars["CURLRETRY_UPSTREAM_PROXY"] = "socks5h://u:s3cret@proxy.corp:1080";
  EXPECT_EQ(load_yaml(file, env).error,
            "CURLRETRY_UPSTREAM_PROXY: its scheme is socks5h://; curlretry's proxy goes through http:// proxies only "
            "(the value is not shown)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  upstream_proxy: https://u:s3cret@proxy.corp\n"),
            "test.yaml:3:19: proxy.upstream_proxy: its scheme is https://; curlretry's proxy goes through http:// "
            "proxies only (the value is not shown)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  upstream_proxy: http://u:s3cret@proxy.corp/path\n"),
            "test.yaml:3:19: proxy.upstream_proxy: a proxy URL has no path, query or fragment (the value is not "
            "shown)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  upstream_proxy: \"http://u:s3cret@\"\n"),
            "test.yaml:3:19: proxy.upstream_proxy: not a proxy URL: it has no host (the value is not shown)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  upstream_proxy: \"http://proxy corp\"\n"),
            "test.yaml:3:19: proxy.upstream_proxy: a proxy URL has no spaces or control characters (the value is "
            "not shown)");
}

// CURLRETRY_UPSTREAM_CA_FILE: how the launcher hands the proxy what a command trusted.
TEST(YamlProxy, UpstreamCaFileFromTheEnvironment) {
  testing::FakeEnv env;
  env.vars["CURLRETRY_UPSTREAM_CA_FILE"] = "/run/trust-0123.pem";
  EXPECT_EQ(load_yaml("version: 1\nproxy:\n  upstream_ca_file: /etc/ca.pem\n", env).config->proxy.upstream_ca_file,
            "/run/trust-0123.pem");
  env.vars["CURLRETRY_UPSTREAM_CA_FILE"] = "trust.pem";
  EXPECT_EQ(load_yaml("version: 1\n", env).error, "CURLRETRY_UPSTREAM_CA_FILE=trust.pem: not an absolute path");
}

TEST(YamlProxy, ForwardLimitsAndTunnelIdle) {
  const ProxySettings defaults = load_yaml("version: 1\n").config->proxy;
  EXPECT_EQ(defaults.forward.allow_ports, (std::vector<unsigned>{80, 443}));
  EXPECT_FALSE(defaults.forward.allow_loopback);
  EXPECT_EQ(defaults.tunnel_idle_ms, 300000);
  LoadResult r = load_yaml(
      "version: 1\nproxy:\n  tunnel_idle_ms: 1500\n  forward: {allow_ports: [443, 8443], allow_loopback: true}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->proxy.tunnel_idle_ms, 1500);
  EXPECT_EQ(r.config->proxy.forward.allow_ports, (std::vector<unsigned>{443, 8443}));
  EXPECT_TRUE(r.config->proxy.forward.allow_loopback);
  r = load_yaml("version: 1\nproxy:\n  forward: {allow_ports: any}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config->proxy.forward.allow_ports.empty());  // any port
  EXPECT_EQ(error_of("version: 1\nproxy:\n  tunnel_idle_ms: 0\n"),
            "test.yaml:3:19: proxy.tunnel_idle_ms: 0 is out of range (expected milliseconds, 1..86400000)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  forward: {allow_ports: [80, 0]}\n"),
            "test.yaml:3:31: proxy.forward.allow_ports[1]: 0 is out of range (expected a TCP port, 1..65535)");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  forward: {allow_ports: 80}\n"),
            "test.yaml:3:26: proxy.forward.allow_ports: a list of TCP ports, e.g. [80, 443, 8080], or `any`");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  forward: {allow_loopback: maybe}\n"),
            "test.yaml:3:29: proxy.forward.allow_loopback: expected true or false, got \"maybe\"");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  forward: {allow_port: [80]}\n"),
            "test.yaml:3:13: proxy.forward.allow_port: unknown key; did you mean \"allow_ports\"?");
}

TEST(YamlProxy, Mistakes) {
  EXPECT_EQ(error_of("version: 1\nproxy:\n  rotues: {}\n"),
            "test.yaml:3:3: proxy.rotues: unknown key; did you mean \"routes\"?");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  routes:\n    a: {upstream: \"ftp://x\"}\n"),
            "test.yaml:4:19: proxy.routes.a.upstream: \"ftp://x\" is not an http:// or https:// URL");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  routes:\n    a: {upstream: \"https://u:p@x\"}\n"),
            "test.yaml:4:19: proxy.routes.a.upstream: an upstream URL may not carry credentials; the program's own "
            "headers pass through");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  routes:\n    a: {upstream: \"https://x/?q=1\"}\n"),
            "test.yaml:4:19: proxy.routes.a.upstream: \"https://x/?q=1\": no query, fragment or spaces in an upstream "
            "URL");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  routes:\n    _curlretry: {upstream: \"https://x\"}\n"),
            "test.yaml:4:5: proxy.routes._curlretry: a route name is 1-64 characters of A-Z a-z 0-9 - _ . and does "
            "not start with '_' or '.'");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  routes:\n    a: {env: X}\n"),
            "test.yaml:4:8: proxy.routes.a: a route needs `upstream: https://...`");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  routes:\n    a: {upstream: \"https://x\", env: \"1X\"}\n"),
            "test.yaml:4:37: proxy.routes.a.env: \"1X\" is not an environment variable name");
  EXPECT_EQ(error_of("version: 1\nproxy:\n  token: short\n"),
            "test.yaml:3:10: proxy.token: too short; use at least 16 random characters");
}

}  // namespace
}  // namespace curlretry::config
