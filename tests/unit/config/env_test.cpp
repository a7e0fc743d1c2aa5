// Environment variables: precedence over the file, the legacy aliases, and strict values.
#include <gtest/gtest.h>

#include "test_env.h"

namespace curlretry::config {
namespace {

using std::chrono::milliseconds;
using testing::FakeEnv;
using testing::load_yaml;

constexpr const char* kFile = R"(version: 1
defaults:
  max_attempts: 4
  backoff: {base_ms: 100, max_ms: 1000}
rules:
  - name: glm
    match: {host: open.bigmodel.cn}
    max_attempts: 6
    backoff: {base_ms: 20}
)";

TEST(Env, PrecedenceIsEnvThenRuleThenDefaultsThenBuiltIn) {
  FakeEnv env;
  LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 4);             // defaults: beats built-in 3
  EXPECT_EQ(r.config->rules[0].policy.max_attempts, 6);      // rule beats defaults:
  EXPECT_EQ(r.config->defaults.max_elapsed, milliseconds(30 * 60 * 1000));  // built-in

  env.vars["CURLRETRY_MAX_ATTEMPTS"] = "2";
  r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 2);
  EXPECT_EQ(r.config->rules[0].policy.max_attempts, 2);  // env beats the rule too
  EXPECT_EQ(r.config->default_sources.at("max_attempts"), "env CURLRETRY_MAX_ATTEMPTS");
  EXPECT_EQ(r.config->rules[0].sources.at("max_attempts"), "env CURLRETRY_MAX_ATTEMPTS");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Env, BaseAndMaxDelayApplyToDefaultsAndEveryRule) {
  FakeEnv env;
  env.vars["CURLRETRY_BASE_MS"] = "250";
  env.vars["CURLRETRY_MAX_DELAY_MS"] = "900";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  for (const core::Policy* p : {&r.config->defaults, &r.config->rules[0].policy}) {
    EXPECT_EQ(p->backoff.base, milliseconds(250));
    EXPECT_EQ(p->backoff.max, milliseconds(900));
  }
  EXPECT_EQ(r.config->rules[0].sources.at("backoff.base_ms"), "env CURLRETRY_BASE_MS");
  EXPECT_EQ(r.config->rules[0].sources.at("backoff.max_ms"), "env CURLRETRY_MAX_DELAY_MS");
}

TEST(Env, EnvAppliesToBuiltInDefaultsWithoutAFile) {
  FakeEnv env;
  env.vars["CURLRETRY_MAX_ATTEMPTS"] = "-1";
  const LoadResult r = load(env.env());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config->file.empty());
  EXPECT_EQ(r.config->defaults.max_attempts, -1);
  EXPECT_EQ(r.config->default_sources.at("max_attempts"), "env CURLRETRY_MAX_ATTEMPTS");
  EXPECT_EQ(r.config->default_sources.at("backoff.base_ms"), "built-in");
}

TEST(Env, LegacyBiliReplayRetryMaxIsMaxAttempts) {
  FakeEnv env;
  env.vars["BILI_REPLAY_RETRY_MAX"] = "1";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 1);
  EXPECT_EQ(r.config->rules[0].policy.max_attempts, 1);
  EXPECT_EQ(r.config->default_sources.at("max_attempts"), "env BILI_REPLAY_RETRY_MAX");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Env, LegacyBiliReplayRetryMaxZeroMeansNoRetries) {
  FakeEnv env;
  env.vars["BILI_REPLAY_RETRY_MAX"] = "0";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 1);
}

TEST(Env, LegacyBiliReplayRetryBaseMsIsTheBaseDelayAndZeroMeansNoDelay) {
  FakeEnv env;
  env.vars["BILI_REPLAY_RETRY_BASE_MS"] = "0";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.backoff.base, milliseconds(0));
  EXPECT_EQ(r.config->rules[0].policy.backoff.base, milliseconds(0));
  EXPECT_EQ(r.config->rules[0].sources.at("backoff.base_ms"), "env BILI_REPLAY_RETRY_BASE_MS");
}

TEST(Env, WhenAnAliasAndItsTwinAreBothSetTheCurlretryOneWinsWithAWarning) {
  FakeEnv env;
  env.vars["BILI_REPLAY_RETRY_MAX"] = "9";
  env.vars["CURLRETRY_MAX_ATTEMPTS"] = "2";
  env.vars["BILI_REPLAY_RETRY_BASE_MS"] = "7";
  env.vars["CURLRETRY_BASE_MS"] = "300";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 2);
  EXPECT_EQ(r.config->defaults.backoff.base, milliseconds(300));
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0], "BILI_REPLAY_RETRY_MAX=9 is ignored: CURLRETRY_MAX_ATTEMPTS=2 is also set and wins");
  EXPECT_EQ(r.warnings[1], "BILI_REPLAY_RETRY_BASE_MS=7 is ignored: CURLRETRY_BASE_MS=300 is also set and wins");
}

TEST(Env, TheAliasWarningSurvivesAnInvalidTwin) {
  FakeEnv env;
  env.vars["BILI_REPLAY_RETRY_MAX"] = "3";
  env.vars["CURLRETRY_MAX_ATTEMPTS"] = "x";
  const LoadResult r = load_yaml(kFile, env);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "CURLRETRY_MAX_ATTEMPTS=x: not an integer (expected -1 or a number >= 1)");
  EXPECT_EQ(r.warnings.size(), 1u);
}

struct BadValue {
  const char* name;
  const char* value;
  const char* error;
};

class EnvBadValue : public ::testing::TestWithParam<BadValue> {};

TEST_P(EnvBadValue, NamesTheVariableAndTheProblem) {
  FakeEnv env;
  env.vars[GetParam().name] = GetParam().value;
  const LoadResult r = load_yaml(kFile, env);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    AllVariables, EnvBadValue,
    ::testing::Values(
        BadValue{"CURLRETRY_MAX_ATTEMPTS", "abc",
                 "CURLRETRY_MAX_ATTEMPTS=abc: not an integer (expected -1 or a number >= 1)"},
        BadValue{"CURLRETRY_MAX_ATTEMPTS", "0",
                 "CURLRETRY_MAX_ATTEMPTS=0: out of range (expected -1 or a number >= 1)"},
        BadValue{"CURLRETRY_MAX_ATTEMPTS", "-2",
                 "CURLRETRY_MAX_ATTEMPTS=-2: out of range (expected -1 or a number >= 1)"},
        BadValue{"CURLRETRY_MAX_ATTEMPTS", "3.5",
                 "CURLRETRY_MAX_ATTEMPTS=3.5: not an integer (expected -1 or a number >= 1)"},
        BadValue{"CURLRETRY_MAX_ATTEMPTS", "99999999999999999999",
                 "CURLRETRY_MAX_ATTEMPTS=99999999999999999999: too large (expected -1 or a number >= 1)"},
        BadValue{"BILI_REPLAY_RETRY_MAX", "many",
                 "BILI_REPLAY_RETRY_MAX=many: not an integer (expected -1, 0 or a number >= 1)"},
        BadValue{"CURLRETRY_BASE_MS", "-5", "CURLRETRY_BASE_MS=-5: out of range (expected milliseconds >= 0)"},
        BadValue{"CURLRETRY_BASE_MS", "1s", "CURLRETRY_BASE_MS=1s: not an integer (expected milliseconds >= 0)"},
        BadValue{"BILI_REPLAY_RETRY_BASE_MS", "-1",
                 "BILI_REPLAY_RETRY_BASE_MS=-1: out of range (expected milliseconds >= 0)"},
        BadValue{"CURLRETRY_MAX_DELAY_MS", "0x10",
                 "CURLRETRY_MAX_DELAY_MS=0x10: not an integer (expected milliseconds >= 0)"},
        BadValue{"CURLRETRY_MAX_DELAY_MS", "9999999999999",
                 "CURLRETRY_MAX_DELAY_MS=9999999999999: out of range (expected milliseconds >= 0)"},
        BadValue{"CURLRETRY_LOG", "verbose",
                 "CURLRETRY_LOG=verbose: unknown log level (expected off, error, warn, info or debug)"},
        BadValue{"CURLRETRY_DISABLE", "maybe",
                 "CURLRETRY_DISABLE=maybe: not a boolean (expected 1/0, true/false, yes/no or on/off)"}),
    [](const ::testing::TestParamInfo<BadValue>& info) {
      return std::string(info.param.name) + "_" + std::to_string(info.index);
    });

TEST(Env, BooleansAndLevelsInEveryUsualSpelling) {
  for (const char* yes : {"1", "true", "YES", "on", "True"}) {
    FakeEnv env;
    env.vars["CURLRETRY_DISABLE"] = yes;
    const LoadResult r = load_yaml(kFile, env);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.config->settings.disabled) << yes;
    EXPECT_EQ(r.config->settings_sources.at("disable"), "env CURLRETRY_DISABLE");
  }
  for (const char* no : {"0", "false", "no", "OFF"}) {
    FakeEnv env;
    env.vars["CURLRETRY_DISABLE"] = no;
    const LoadResult r = load_yaml("version: 1\nsettings: {disable: true}\n", env);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_FALSE(r.config->settings.disabled) << no;
  }
  FakeEnv env;
  env.vars["CURLRETRY_LOG"] = "DEBUG";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->settings.log_level, LogLevel::debug);
}

TEST(Env, LogFileAndEventsFileOverrideSettings) {
  FakeEnv env;
  env.vars["CURLRETRY_LOG_FILE"] = "/tmp/x.log";
  env.vars["CURLRETRY_EVENTS"] = "/tmp/events.jsonl";
  const LoadResult r = load_yaml("version: 1\nsettings: {log_file: /var/log/a.log}\n", env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->settings.log_file, "/tmp/x.log");
  EXPECT_EQ(r.config->settings.events_file, "/tmp/events.jsonl");
  EXPECT_EQ(r.config->settings_sources.at("log_file"), "env CURLRETRY_LOG_FILE");
  EXPECT_EQ(r.config->settings_sources.at("events_file"), "env CURLRETRY_EVENTS");
}

TEST(Env, EmptyValuesCountAsUnset) {
  FakeEnv env;
  env.vars["CURLRETRY_MAX_ATTEMPTS"] = "";
  env.vars["CURLRETRY_LOG"] = "";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 4);
}

TEST(Env, SurroundingWhitespaceIsTolerated) {
  FakeEnv env;
  env.vars["CURLRETRY_MAX_ATTEMPTS"] = " 5\n";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 5);
}

TEST(Env, SecureExecutionIgnoresEveryVariable) {
  FakeEnv env;
  env.secure = true;
  env.vars["CURLRETRY_MAX_ATTEMPTS"] = "abc";  // would be an error if read
  env.vars["BILI_REPLAY_RETRY_MAX"] = "1";
  env.vars["CURLRETRY_DISABLE"] = "1";
  env.vars["CURLRETRY_LOG_FILE"] = "/tmp/owned";
  const LoadResult r = load_yaml(kFile, env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 4);
  EXPECT_FALSE(r.config->settings.disabled);
  EXPECT_TRUE(r.config->settings.log_file.empty());
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Env, AnEnvErrorWinsOverAFileError) {
  // Both are wrong; the variable is reported (it is the one the user just typed).
  FakeEnv env;
  env.vars["CURLRETRY_BASE_MS"] = "x";
  const LoadResult r = load_yaml("version: 9\n", env);
  EXPECT_EQ(r.error, "CURLRETRY_BASE_MS=x: not an integer (expected milliseconds >= 0)");
}

TEST(Env, ControlCharactersInValuesAreNotEchoed) {
  FakeEnv env;
  env.vars["CURLRETRY_LOG"] = "a\x1b[31mb";
  const LoadResult r = load_yaml(kFile, env);
  EXPECT_EQ(r.error, "CURLRETRY_LOG=a?[31mb: unknown log level (expected off, error, warn, info or debug)");
}

}  // namespace
}  // namespace curlretry::config
