// proxy/ensure_digest: the config digest --ensure compares with a running proxy's health answer.
#include "proxy/ensure_digest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace curlretry::proxy {
namespace {

std::string body(const ConfigDigest& d) { return "{\"status\":\"ok\"" + config_digest_field(d) + ",\"routes\":[]}"; }

TEST(EnsureDigest, EqualConfigsAgreeAndEachPartIsNamed) {
  config::Config a;
  a.proxy.routes.push_back({"anthropic", "https://api.anthropic.com", "ANTHROPIC_BASE_URL"});
  char one[] = "CURLRETRY_MAX_ATTEMPTS=3";
  char library[] = "CURLRETRY_LIBRARY=/x/libcurlretry.so";
  char other[] = "PATH=/bin";
  char* env[] = {one, library, other, nullptr};
  const ConfigDigest running = config_digest("secret", a, env);
  EXPECT_EQ(config_differences(config_digest("secret", a, env), body(running)), std::vector<std::string>{});

  config::Config b = a;
  b.proxy.routes[0].upstream = "https://api.anthropic.com/v2";
  b.proxy.intercept = {"api.openai.com"};
  char four[] = "CURLRETRY_MAX_ATTEMPTS=4";
  char* env4[] = {four, nullptr};
  EXPECT_EQ(config_differences(config_digest("secret", b, env4), body(running)),
            (std::vector<std::string>{"routes", "intercept list", "CURLRETRY_* settings"}));
  // Where the library is does not change how anything is retried.
  char* env_no_library[] = {one, other, nullptr};
  EXPECT_EQ(config_differences(config_digest("secret", a, env_no_library), body(running)), std::vector<std::string>{});
}

TEST(EnsureDigest, AnIncludedFileCounts) {
  const std::string path = ::testing::TempDir() + "ensure_digest_included.yaml";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("rules: []\n", f);
  std::fclose(f);
  config::Config a;
  a.file = "/nonexistent/top.yaml";
  a.files = {path, a.file};
  char* env[] = {nullptr};
  const ConfigDigest before = config_digest("s", a, env);
  f = std::fopen(path.c_str(), "w");
  std::fputs("rules: [] # edited\n", f);
  std::fclose(f);
  EXPECT_EQ(config_differences(config_digest("s", a, env), body(before)), std::vector<std::string>{"config files"});
  std::remove(path.c_str());
}

TEST(EnsureDigest, KeyedByTheSecretAndAbsentFromAnOlderProxy) {
  config::Config a;
  char* env[] = {nullptr};
  EXPECT_NE(config_digest("one", a, env).routes, config_digest("two", a, env).routes);
  EXPECT_EQ(config_digest_field(config_digest("", a, env)), "");
  EXPECT_EQ(config_differences(config_digest("s", a, env), "{\"status\":\"ok\",\"routes\":[]}").size(), 4u);
}

TEST(EnsureDigest, TheIdNamesTheWholeDigestInTwelveHexDigits) {
  config::Config a;
  char three[] = "CURLRETRY_MAX_ATTEMPTS=3";
  char four[] = "CURLRETRY_MAX_ATTEMPTS=4";
  char* env3[] = {three, nullptr};
  char* env4[] = {four, nullptr};
  const std::string id = config_id(config_digest("s", a, env3));
  EXPECT_EQ(id.size(), 12u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(config_id(config_digest("s", a, env3)), id);
  EXPECT_NE(config_id(config_digest("s", a, env4)), id);
  config::Config routed = a;
  routed.proxy.routes.push_back({"anthropic", "https://api.anthropic.com", "ANTHROPIC_BASE_URL"});
  EXPECT_NE(config_id(config_digest("s", routed, env3)), id);
  // Parts moved between fields are another digest: each is length-prefixed.
  ConfigDigest swapped = config_digest("s", a, env3);
  std::swap(swapped.files, swapped.settings);
  EXPECT_NE(config_id(swapped), id);
  EXPECT_EQ(config_id(config_digest("", a, env3)), "");
}

}  // namespace
}  // namespace curlretry::proxy
