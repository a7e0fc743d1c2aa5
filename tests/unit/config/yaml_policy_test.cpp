// What a valid file means: values, the rule overlay, and where each value came from.
#include <gtest/gtest.h>

#include "test_env.h"

namespace curlretry::config {
namespace {

using testing::load_yaml;
using std::chrono::milliseconds;

constexpr const char* kIssueExample = R"(version: 1
defaults:
  max_attempts: 3
  backoff: {strategy: exponential, base_ms: 1500, max_ms: 60000, jitter: none}
  retry_after: {honor: true, max_ms: 120000}
  retry_on: {status: [408, 429, 500, 502, 503, 504, 529], body_markers: [captcha], transport: [reset]}
  never_retry: {body_markers: [daily quota]}
rules:
  - name: glm
    match: {host: "open.bigmodel.cn", path: "/api/*", method: POST}
    max_attempts: 5
    backoff: {strategy: triangular, base_ms: 20, max_ms: 50}
    codes: {path: error.code, retry: ["1302", "1305"], permanent: ["1113", "1308"]}
)";

TEST(YamlPolicy, NoFileMeansBuiltInDefaultsEverywhere) {
  const LoadResult r = load_yaml("version: 1\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const core::Policy builtin = core::Policy::builtin();
  EXPECT_EQ(r.config->defaults.max_attempts, builtin.max_attempts);
  EXPECT_EQ(r.config->defaults.backoff.base, builtin.backoff.base);
  EXPECT_EQ(r.config->defaults.retry_markers, builtin.retry_markers);
  EXPECT_EQ(r.config->default_sources.at("max_attempts"), "built-in");
  EXPECT_EQ(r.config->default_sources.at("retry_on.body_markers"), "built-in");
  EXPECT_TRUE(r.config->rules.empty());
  EXPECT_EQ(r.config->file, "test.yaml");
}

TEST(YamlPolicy, TheIssueExampleLoads) {
  const LoadResult r = load_yaml(kIssueExample);
  ASSERT_TRUE(r.ok()) << r.error;
  const Config& c = *r.config;
  EXPECT_EQ(c.defaults.max_attempts, 3);
  EXPECT_EQ(c.defaults.backoff.strategy, core::Strategy::exponential);
  EXPECT_EQ(c.defaults.backoff.base, milliseconds(1500));
  EXPECT_EQ(c.defaults.retry_status, (std::vector<int>{408, 429, 500, 502, 503, 504, 529}));
  EXPECT_EQ(c.defaults.retry_markers, (std::vector<std::string>{"captcha"}));
  EXPECT_EQ(c.defaults.retry_transport, (std::vector<core::Transport>{core::Transport::reset}));
  EXPECT_EQ(c.defaults.permanent_markers, (std::vector<std::string>{"daily quota"}));

  ASSERT_EQ(c.rules.size(), 1u);
  const Rule& glm = c.rules[0];
  EXPECT_EQ(glm.name, "glm");
  EXPECT_EQ(glm.match.host, "open.bigmodel.cn");
  EXPECT_EQ(glm.match.path, "/api/*");
  EXPECT_EQ(glm.match.method, "POST");
  EXPECT_EQ(glm.policy.max_attempts, 5);
  EXPECT_EQ(glm.policy.backoff.strategy, core::Strategy::triangular);
  EXPECT_EQ(glm.policy.backoff.base, milliseconds(20));
  EXPECT_EQ(glm.policy.backoff.max, milliseconds(50));
  ASSERT_EQ(glm.policy.codes.size(), 1u);
  EXPECT_EQ(glm.policy.codes[0].path, "error.code");
  EXPECT_EQ(glm.policy.codes[0].retry, (std::vector<std::string>{"1302", "1305"}));
  EXPECT_EQ(glm.policy.codes[0].permanent, (std::vector<std::string>{"1113", "1308"}));
}

TEST(YamlPolicy, RuleOverlaysOnlyWhatItSetsAndInheritsTheRest) {
  const LoadResult r = load_yaml(kIssueExample);
  ASSERT_TRUE(r.ok()) << r.error;
  const Rule& glm = r.config->rules[0];
  // Not set by the rule: from `defaults:` (and their sources say so).
  EXPECT_EQ(glm.policy.backoff.jitter, core::Jitter::none);
  EXPECT_EQ(glm.policy.retry_status, r.config->defaults.retry_status);
  EXPECT_EQ(glm.policy.max_retry_after, milliseconds(120000));
  EXPECT_EQ(glm.sources.at("backoff.jitter"), "test.yaml:4:74");
  EXPECT_EQ(glm.sources.at("retry_on.status"), "test.yaml:6:22");
  // Not set anywhere: built-in.
  EXPECT_EQ(glm.policy.max_elapsed, milliseconds(30 * 60 * 1000));
  EXPECT_EQ(glm.sources.at("max_elapsed_ms"), "built-in");
  // Set by the rule.
  EXPECT_EQ(glm.sources.at("max_attempts"), "test.yaml:11:19");
  EXPECT_EQ(glm.sources.at("backoff.base_ms"), "test.yaml:12:46");
  EXPECT_EQ(glm.sources.at("codes"), "test.yaml:13:12");
}

TEST(YamlPolicy, NestedMapsMergeKeyByKey) {
  const LoadResult r = load_yaml(
      "version: 1\ndefaults:\n  backoff: {strategy: constant, base_ms: 100, jitter: full}\nrules:\n"
      "  - name: a\n    backoff: {base_ms: 7}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const core::Backoff& b = r.config->rules[0].policy.backoff;
  EXPECT_EQ(b.strategy, core::Strategy::constant);
  EXPECT_EQ(b.jitter, core::Jitter::full);
  EXPECT_EQ(b.base, milliseconds(7));
}

TEST(YamlPolicy, ListsReplaceInsteadOfAppending) {
  const LoadResult r = load_yaml(
      "version: 1\ndefaults:\n  retry_on: {status: [500, 503]}\nrules:\n  - name: a\n    retry_on: {status: [429]}\n"
      "  - name: b\n    retry_on: {status: []}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.retry_status, (std::vector<int>{500, 503}));
  EXPECT_EQ(r.config->rules[0].policy.retry_status, (std::vector<int>{429}));
  EXPECT_TRUE(r.config->rules[1].policy.retry_status.empty());
  // The defaults' markers are untouched: only the listed key was replaced.
  EXPECT_EQ(r.config->rules[0].policy.retry_markers, core::Policy::builtin().retry_markers);
}

TEST(YamlPolicy, CodesAcceptASingleMapOrAListAndNumbersAsText) {
  const LoadResult one = load_yaml("version: 1\ndefaults:\n  codes: {path: code, retry: [1302], permanent: [\"x\"]}\n");
  ASSERT_TRUE(one.ok()) << one.error;
  ASSERT_EQ(one.config->defaults.codes.size(), 1u);
  EXPECT_EQ(one.config->defaults.codes[0].retry, (std::vector<std::string>{"1302"}));
  const LoadResult two = load_yaml(
      "version: 1\ndefaults:\n  codes:\n    - {path: error.code, retry: [\"1302\"]}\n"
      "    - {path: error.type, permanent: [insufficient_quota]}\n");
  ASSERT_TRUE(two.ok()) << two.error;
  ASSERT_EQ(two.config->defaults.codes.size(), 2u);
  EXPECT_EQ(two.config->defaults.codes[1].path, "error.type");
  EXPECT_EQ(two.config->defaults.codes[1].permanent, (std::vector<std::string>{"insufficient_quota"}));
}

TEST(YamlPolicy, EverySettingAndPolicyKey) {
  const LoadResult r = load_yaml(R"(version: 1
defaults:
  max_attempts: -1
  max_elapsed_ms: 60000
  backoff: {strategy: constant, base_ms: 0, max_ms: 0, jitter: decorrelated}
  retry_after: {honor: false, max_ms: 5000}
  retry_on: {transport: [timeout, http2_stream]}
  body_window: 128
settings:
  disable: yes
  log: debug
  log_file: /tmp/curlretry.log
  events_file: /tmp/events.jsonl
  max_upload_replay: 0
  max_error_body: 1024
)");
  ASSERT_TRUE(r.ok()) << r.error;
  const Config& c = *r.config;
  EXPECT_EQ(c.defaults.max_attempts, -1);
  EXPECT_EQ(c.defaults.max_elapsed, milliseconds(60000));
  EXPECT_EQ(c.defaults.backoff.jitter, core::Jitter::decorrelated);
  EXPECT_FALSE(c.defaults.honor_retry_after);
  EXPECT_EQ(c.defaults.max_retry_after, milliseconds(5000));
  EXPECT_EQ(c.defaults.retry_transport, (std::vector<core::Transport>{core::Transport::timeout,
                                                                      core::Transport::http2_stream}));
  EXPECT_EQ(c.defaults.body_window, 128u);
  EXPECT_TRUE(c.settings.disabled);
  EXPECT_EQ(c.settings.log_level, LogLevel::debug);
  EXPECT_EQ(c.settings.log_file, "/tmp/curlretry.log");
  EXPECT_EQ(c.settings.events_file, "/tmp/events.jsonl");
  EXPECT_EQ(c.settings.max_upload_replay, 0u);
  EXPECT_EQ(c.settings.max_error_body, 1024u);
  EXPECT_EQ(c.settings_sources.at("log"), "test.yaml:11:8");
  EXPECT_EQ(c.settings_sources.at("max_upload_replay"), "test.yaml:14:22");
}

TEST(YamlPolicy, LogOffIsALevelNotABoolean) {
  const LoadResult r = load_yaml("version: 1\nsettings: {log: off}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->settings.log_level, LogLevel::off);
}

TEST(YamlPolicy, EmptySectionsAreAllowed) {
  const LoadResult r = load_yaml("version: 1\ndefaults:\nsettings:\nrules:\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config->rules.empty());
}

TEST(YamlPolicy, RulesWithoutNamesAreNamedByIndex) {
  const LoadResult r = load_yaml("version: 1\nrules:\n  - match: {host: a}\n  - match: {host: b}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->rules[0].name, "rules[0]");
  EXPECT_EQ(r.config->rules[1].name, "rules[1]");
}

TEST(YamlPolicy, RulesAfterACatchAllRuleAreWarnedAbout) {
  const LoadResult r = load_yaml("version: 1\nrules:\n  - name: all\n  - name: glm\n    match: {host: x}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "test.yaml:4:5: rules[1] (glm) never matches: rule \"all\" before it matches every request");
}

TEST(YamlPolicy, HostAndMethodAreNormalised) {
  const LoadResult r = load_yaml("version: 1\nrules:\n  - match: {host: API.Z.AI, method: post}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->rules[0].match.host, "api.z.ai");
  EXPECT_EQ(r.config->rules[0].match.method, "POST");
}

TEST(YamlPolicy, UnicodeMarkersSurvive) {
  const LoadResult r = load_yaml("version: 1\ndefaults:\n  retry_on: {body_markers: [\"风控\", 'rate limit']}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.retry_markers, (std::vector<std::string>{"风控", "rate limit"}));
}

}  // namespace
}  // namespace curlretry::config

namespace curlretry::config {
namespace {

TEST(YamlPolicy, UnansweredPostIsABooleanThatRulesInheritKeyByKey) {
  const LoadResult r = testing::load_yaml(
      "version: 1\ndefaults:\n  retry_on: {unanswered_post: false}\n"
      "rules:\n  - name: a\n    match: {host: a.example}\n    retry_on: {status: [503]}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.config->defaults.retry_unanswered_post);
  EXPECT_EQ(r.config->default_sources.at("retry_on.unanswered_post"), "test.yaml:3:31");
  ASSERT_EQ(r.config->rules.size(), 1u);
  EXPECT_FALSE(r.config->rules[0].policy.retry_unanswered_post);
  EXPECT_TRUE(testing::load_yaml("version: 1\n").config->defaults.retry_unanswered_post);
  const LoadResult bad = testing::load_yaml("version: 1\ndefaults:\n  retry_on: {unanswered_post: maybe}\n");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace curlretry::config
