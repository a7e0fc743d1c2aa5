#include <gtest/gtest.h>

#include <string>

#include "core/fleet_key.h"

namespace curlretry::core::fleet_key {
namespace {

std::string authority(std::string_view url) {
  char buf[64];
  std::size_t n = authority_of(url, buf, sizeof buf);
  return std::string(buf, n);
}

TEST(FleetKey, HashIsStableAndNeverZero) {
  EXPECT_EQ(hash("api.example.com:443"), hash("api.example.com:443"));
  EXPECT_NE(hash("api.example.com:443"), hash("api.example.com:80"));
  EXPECT_NE(hash(""), 0u);
}

TEST(FleetKey, AuthorityWithDefaultPorts) {
  EXPECT_EQ(authority("https://API.Example.com/v1/x?key=secret"), "api.example.com:443");
  EXPECT_EQ(authority("http://example.com"), "example.com:80");
  EXPECT_EQ(authority("http://127.0.0.1:8080/x"), "127.0.0.1:8080");
  EXPECT_EQ(authority("https://user:pw@host.test:8443/"), "host.test:8443");
  EXPECT_EQ(authority("http://[::1]:9000/a"), "[::1]:9000");
  EXPECT_EQ(authority("http://[::1]/a"), "[::1]:80");
  EXPECT_EQ(authority("example.com./x"), "example.com:80");
}

TEST(FleetKey, AuthorityRefusesWhatDoesNotFit) {
  char buf[8];
  EXPECT_EQ(authority_of("http://a-very-long-host.example/", buf, sizeof buf), 0u);
  EXPECT_EQ(authority_of("http:///path", buf, sizeof buf), 0u);
  EXPECT_EQ(authority_of("http://[::1/", buf, sizeof buf), 0u);
}

TEST(FleetKey, CredentialHeaders) {
  EXPECT_EQ(credential_of("Authorization: Bearer sk-1"), "Bearer sk-1");
  EXPECT_EQ(credential_of("x-api-key:  abc  "), "abc");
  EXPECT_EQ(credential_of("API-KEY: k"), "k");
  EXPECT_EQ(credential_of("Accept: */*"), std::nullopt);
  EXPECT_EQ(credential_of("Authorization:"), std::nullopt);
  EXPECT_EQ(credential_of("x-api-keys: nope"), std::nullopt);
}

TEST(FleetKey, RateLimitsArePerCredentialOverloadIsPerHost) {
  const std::string a = cooldown_key("h:443", 429, std::string_view("Bearer A"));
  const std::string b = cooldown_key("h:443", 429, std::string_view("Bearer B"));
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("h:443 key:", 0), 0u);
  EXPECT_EQ(a.size(), std::string("h:443 key:").size() + 8);
  EXPECT_EQ(a, credential_key("h:443", "Bearer A"));
  EXPECT_EQ(cooldown_key("h:443", 503, std::string_view("Bearer A")), "h:443");
  EXPECT_EQ(cooldown_key("h:443", 429, std::nullopt), "h:443");
}

TEST(FleetKey, TheTagNeverContainsTheCredential) {
  const std::string key = cooldown_key("h:443", 429, std::string_view("sk-secret-value"));
  EXPECT_EQ(key.find("secret"), std::string::npos);
}

}  // namespace
}  // namespace curlretry::core::fleet_key
