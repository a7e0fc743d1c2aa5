// config/keys.h is the one list of config keys: the loader accepts what it lists, the built-in and
// env sources name its keys, `check` lists exactly its keys in its order, and every variable it
// names is read. (config/REFERENCE.md's key tables are held to it in reference_doc_test.cpp.)
#include "config/keys.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "cli/describe.h"
#include "config/yaml_loader.h"
#include "test_env.h"

namespace curlretry::config {
namespace {

using testing::FakeEnv;
using testing::load_yaml;

std::vector<std::string> table_keys(std::initializer_list<KeyScope> scopes) {
  std::vector<std::string> out;
  for (const KeyDef& key : kKeys) {
    if (std::find(scopes.begin(), scopes.end(), key.scope) != scopes.end()) out.emplace_back(key.name);
  }
  return out;
}

std::vector<std::string> names(const cli::KeyValues& values) {
  std::vector<std::string> out;
  for (const auto& [key, value] : values) out.push_back(key);
  return out;
}

std::vector<std::string> names(const Sources& sources) {
  std::vector<std::string> out;
  for (const auto& [key, value] : sources) out.push_back(key);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Keys, CheckListsExactlyTheTableInItsOrder) {
  EXPECT_EQ(names(cli::describe_policy(core::Policy::builtin())), table_keys({KeyScope::policy}));
  EXPECT_EQ(names(cli::describe_settings(Settings{})), table_keys({KeyScope::settings, KeyScope::fleet}));
}

TEST(Keys, EveryKeyHasABuiltInSource) {
  const Config c = builtin_config();
  EXPECT_EQ(names(c.default_sources), sorted(table_keys({KeyScope::policy})));
  EXPECT_EQ(names(c.settings_sources), sorted(table_keys({KeyScope::settings, KeyScope::fleet})));
}

TEST(Keys, SectionsAreDerivedFromTheDottedNames) {
  EXPECT_EQ(file_keys(KeyScope::policy, "backoff"),
            (std::vector<std::string_view>{"strategy", "base_ms", "max_ms", "jitter"}));
  EXPECT_EQ(file_keys(KeyScope::fleet, "fleet"), (std::vector<std::string_view>{"store", "hold_new", "budget"}));
  EXPECT_EQ(file_keys(KeyScope::fleet, "fleet.budget"),
            (std::vector<std::string_view>{"percent", "window_ms", "reserve"}));
  const auto top = file_keys(KeyScope::policy, "");
  EXPECT_EQ(std::count(top.begin(), top.end(), "backoff"), 1);
  EXPECT_EQ(std::count(top.begin(), top.end(), "backoff.strategy"), 0);
}

// The structural keys: a rule's list is its parts with every policy key where "*" stands, in the
// order "unknown key" errors list them (the order the loader's private lists had).
TEST(Keys, PartKeysSpellOutARuleAndKeepTheirOrder) {
  std::vector<std::string_view> rule = {"name", "match"};
  for (const auto key : file_keys(KeyScope::policy, "")) rule.push_back(key);
  rule.insert(rule.end(), {"fallback", "auth"});
  EXPECT_EQ(part_keys("rule"), rule);
  EXPECT_EQ(part_keys(""), (std::vector<std::string_view>{"version", "include", "defaults", "settings", "rules",
                                                          "fleet", "proxy"}));
  EXPECT_EQ(part_keys("codes"), (std::vector<std::string_view>{"path", "retry", "permanent"}));
  EXPECT_EQ(part_keys("proxy"), (std::vector<std::string_view>{"routes", "token", "max_body_bytes", "intercept",
                                                               "upstream_ca_file", "forward", "tunnel_idle_ms",
                                                               "max_connections", "upstream_proxy"}));
  EXPECT_EQ(part_keys("proxy.route"), (std::vector<std::string_view>{"upstream", "env"}));
  EXPECT_TRUE(part_keys("no such part").empty());
}

// A file's unknown rule key still names the rule's keys in the old order.
TEST(Keys, AnUnknownRuleKeyGetsTheRuleList) {
  const auto r = load_from_string("version: 1\nrules:\n  - name: a\n    zzzzzzzzzzzz: 1\n", "t.yaml", FakeEnv{}.env());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("unknown key (known keys here: name, match, max_attempts,"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(", fallback, auth)"), std::string::npos) << r.error;
}

// Every variable of the table is read, and the source it records is its key's.
TEST(Keys, EveryVariableIsReadAndRecordedUnderItsKey) {
  const std::map<std::string_view, std::string> valid = {
      {"CURLRETRY_MAX_ATTEMPTS", "5"}, {"BILI_REPLAY_RETRY_MAX", "5"},   {"CURLRETRY_BASE_MS", "10"},
      {"BILI_REPLAY_RETRY_BASE_MS", "10"}, {"CURLRETRY_MAX_DELAY_MS", "10"}, {"CURLRETRY_JITTER", "full"},
      {"CURLRETRY_DISABLE", "1"},       {"CURLRETRY_LOG", "debug"},      {"CURLRETRY_LOG_FILE", "/tmp/log"},
      {"CURLRETRY_EVENTS", "/tmp/ev"},  {"CURLRETRY_PERSISTENT", "1"},   {"CURLRETRY_FLEET", "off"},
      {"CURLRETRY_FLEET_DIR", "/tmp"},
  };
  for (const KeyDef& key : kKeys) {
    for (const std::string_view variable : {key.env, key.legacy_env}) {
      if (variable.empty()) continue;
      const auto value = valid.find(variable);
      ASSERT_NE(value, valid.end()) << variable << " is new: give it a valid value here";
      FakeEnv env;
      env.vars[std::string(variable)] = value->second;
      const LoadResult r = load_yaml("version: 1\n", env);
      ASSERT_TRUE(r.ok()) << r.error;
      const Sources& sources = key.scope == KeyScope::policy ? r.config->default_sources : r.config->settings_sources;
      EXPECT_EQ(sources.at(std::string(key.name)), "env " + std::string(variable));
      // And a value that does not parse is an error naming the variable (strings take anything).
      env.vars[std::string(variable)] = "\x01not valid";
      const LoadResult bad = load_yaml("version: 1\n", env);
      if (!bad.ok()) {
        EXPECT_EQ(bad.error.rfind(std::string(variable) + "=", 0), 0u) << bad.error;
      }
    }
  }
}

}  // namespace
}  // namespace curlretry::config
