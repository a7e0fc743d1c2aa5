// The careful-client keys: rules by request header, fallback, auth, persistent mode.
#include <gtest/gtest.h>

#include "test_env.h"

namespace curlretry::config {
namespace {

using testing::FakeEnv;
using testing::load_yaml;

constexpr const char* kHeaderRules = R"(version: 1
rules:
  - name: background
    match: {host: api.anthropic.com, header: {X-Request-Kind: background, X-App: "cli*"}}
    max_attempts: 1
  - name: anthropic
    match: {host: api.anthropic.com}
    max_attempts: 9
)";

std::string rule_for(const Config& c, const RequestHeaders* headers) {
  const Rule* r = c.match("POST", "api.anthropic.com", "/v1/messages", headers);
  return r ? r->name : "defaults";
}

TEST(HeaderRules, AllHeadersMustMatchNamesIgnoreCase) {
  const LoadResult r = load_yaml(kHeaderRules);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.config->rules[0].match.headers.size(), 2u);
  EXPECT_EQ(r.config->rules[0].match.headers[0].name, "x-request-kind");
  EXPECT_TRUE(r.config->has_header_rules());
  const RequestHeaders both = {{"x-request-kind", "background"}, {"x-app", "cli-2.0"}};
  const RequestHeaders one = {{"x-request-kind", "background"}};
  const RequestHeaders wrong_case_value = {{"x-request-kind", "Background"}, {"x-app", "cli"}};
  EXPECT_EQ(rule_for(*r.config, &both), "background");
  EXPECT_EQ(rule_for(*r.config, &one), "anthropic");
  EXPECT_EQ(rule_for(*r.config, &wrong_case_value), "anthropic");
  EXPECT_EQ(rule_for(*r.config, nullptr), "anthropic");
}

TEST(HeaderRules, ARuleWithOnlyAHeaderMatchIsNotACatchAll) {
  const LoadResult r = load_yaml(R"(version: 1
rules:
  - name: bg
    match: {header: {x-request-kind: background}}
  - name: rest
    max_attempts: 4
)");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.warnings.empty());
}

TEST(HeaderRules, BadNameOrGlobIsAnErrorWithItsPosition) {
  LoadResult r = load_yaml("version: 1\nrules:\n  - match: {header: {\"x kind\": a}}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error, "test.yaml:3:22: rules[0].match.header.x kind: \"x kind\" is not a header name");
  r = load_yaml("version: 1\nrules:\n  - match: {header: {x-kind: \"[a\"}}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("test.yaml:3:30: rules[0].match.header.x-kind: bad glob"), std::string::npos) << r.error;
  r = load_yaml("version: 1\nrules:\n  - match: {header: {X-A: a, x-a: b}}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("listed twice"), std::string::npos) << r.error;
}

TEST(Fallback, DefaultsAndTheOnListSplitIntoStatusesAndMarkers) {
  LoadResult r = load_yaml(R"(version: 1
rules:
  - name: a
    fallback: {model: claude-y}
  - name: b
    fallback: {after: 2, on: [529, 503, overloaded_error, "500"], url: "https://backup.example/v1/"}
)");
  ASSERT_TRUE(r.ok()) << r.error;
  const Fallback& a = r.config->rules[0].fallback;
  EXPECT_EQ(a.after, 3);
  EXPECT_EQ(a.on_status, (std::vector<int>{529}));
  EXPECT_EQ(a.on_markers, (std::vector<std::string>{"overloaded_error"}));
  EXPECT_EQ(a.model, "claude-y");
  const Fallback& b = r.config->rules[1].fallback;
  EXPECT_EQ(b.after, 2);
  EXPECT_EQ(b.on_status, (std::vector<int>{529, 503}));
  EXPECT_EQ(b.on_markers, (std::vector<std::string>{"overloaded_error", "500"}));
  EXPECT_EQ(b.url, "https://backup.example/v1");
  EXPECT_EQ(r.config->rules[1].sources.at("fallback"), "test.yaml:6:15");
  EXPECT_FALSE(r.config->rules[0].auth.enabled());
}

TEST(Fallback, NeedsSomethingToFallBackTo) {
  LoadResult r = load_yaml("version: 1\nrules:\n  - fallback: {after: 3}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error, "test.yaml:3:15: rules[0].fallback: needs `model:` and/or `url:` to fall back to");
  r = load_yaml("version: 1\nrules:\n  - fallback: {after: 0, model: x}\n");
  ASSERT_FALSE(r.ok());
  r = load_yaml("version: 1\nrules:\n  - fallback: {url: \"ftp://x\"}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("is not a base URL"), std::string::npos) << r.error;
}

TEST(Auth, CommandIsRequiredAndTheRestHasDefaults) {
  LoadResult r = load_yaml("version: 1\nrules:\n  - auth: {command: [/bin/tok, --fresh]}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const AuthRefresh& a = r.config->rules[0].auth;
  EXPECT_EQ(a.on, (std::vector<int>{401}));
  EXPECT_EQ(a.command, (std::vector<std::string>{"/bin/tok", "--fresh"}));
  EXPECT_EQ(a.header, "Authorization");
  EXPECT_EQ(a.timeout_ms, 10000);
  r = load_yaml("version: 1\nrules:\n  - auth: {on: [401]}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("rules[0].auth.command: missing"), std::string::npos) << r.error;
  r = load_yaml("version: 1\nrules:\n  - auth: {command: \"/bin/tok --fresh\"}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("argv list"), std::string::npos) << r.error;
}

constexpr const char* kPersistent = R"(version: 1
settings:
  persistent: true
  heartbeat_ms: 500
defaults:
  max_elapsed_ms: 1000000
rules:
  - name: background
    match: {header: {x-request-kind: background}}
    max_attempts: 1
  - name: fg
    match: {host: "*"}
    backoff: {max_ms: 2000}
)";

TEST(Persistent, UnlimitedAttemptsFiveMinuteCapSixHoursUnlessSet) {
  const LoadResult r = load_yaml(kPersistent);
  ASSERT_TRUE(r.ok()) << r.error;
  const Config& c = *r.config;
  EXPECT_TRUE(c.settings.persistent);
  EXPECT_EQ(c.settings.heartbeat_ms, 500);
  EXPECT_EQ(c.defaults.max_attempts, -1);
  EXPECT_EQ(c.defaults.backoff.max.count(), 300000);
  EXPECT_EQ(c.defaults.max_retry_after.count(), 300000);
  EXPECT_EQ(c.defaults.max_elapsed.count(), 1000000);  // set in the file: kept
  EXPECT_EQ(c.default_sources.at("max_attempts"), "persistent (test.yaml:3:15)");
  EXPECT_EQ(c.rules[0].policy.max_attempts, 1);  // "never retry" stays
  EXPECT_EQ(c.rules[1].policy.max_attempts, -1);
  EXPECT_EQ(c.rules[1].policy.backoff.max.count(), 2000);  // set in the rule: kept
}

TEST(Persistent, FromTheEnvironment) {
  FakeEnv env;
  env.vars["CURLRETRY_PERSISTENT"] = "1";
  LoadResult r = load_yaml("version: 1\n", env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, -1);
  EXPECT_EQ(r.config->defaults.max_elapsed.count(), 6LL * 3600 * 1000);
  EXPECT_EQ(r.config->settings_sources.at("persistent"), "env CURLRETRY_PERSISTENT");
  EXPECT_EQ(r.config->default_sources.at("backoff.max_ms"), "persistent (env CURLRETRY_PERSISTENT)");
  env.vars["CURLRETRY_PERSISTENT"] = "sometimes";
  r = load_yaml("version: 1\n", env);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error, "CURLRETRY_PERSISTENT=sometimes: not a boolean (expected 1/0, true/false, yes/no or on/off)");
  env.vars["CURLRETRY_PERSISTENT"] = "0";
  r = load_yaml("version: 1\nsettings: {persistent: true}\n", env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 3);
}

TEST(Persistent, OffByDefault) {
  const LoadResult r = load_yaml("version: 1\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.config->settings.persistent);
  EXPECT_EQ(r.config->settings.heartbeat_ms, 30000);
  EXPECT_EQ(r.config->defaults.max_attempts, 3);
}

}  // namespace
}  // namespace curlretry::config
