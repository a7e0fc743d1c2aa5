// The `stream:` key: built-in defaults, per-rule overlay key by key, errors at file:line:col.
#include <gtest/gtest.h>

#include "test_env.h"

namespace curlretry::config {
namespace {

using testing::error_of;
using testing::load_yaml;

TEST(YamlStream, BuiltInDefaultsWithoutAFile) {
  const LoadResult r = load_yaml("version: 1\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const core::StreamRules& s = r.config->defaults.stream;
  EXPECT_TRUE(s.hold);
  EXPECT_EQ(s.hold_max_bytes, 65536u);
  EXPECT_TRUE(s.content_events.empty());
  EXPECT_EQ(s.setup_events,
            (std::vector<std::string>{"message_start", "ping", "response.created", "response.in_progress"}));
  EXPECT_EQ(r.config->default_sources.at("stream.hold"), "built-in");
  EXPECT_EQ(r.config->default_sources.at("stream.setup_events"), "built-in");
}

TEST(YamlStream, RuleOverlaysKeyByKeyAndListsReplace) {
  const LoadResult r = load_yaml(
      "version: 1\n"
      "defaults:\n"
      "  stream: {hold_max_bytes: 1000}\n"
      "rules:\n"
      "  - name: anthropic\n"
      "    match: {host: api.anthropic.com}\n"
      "    stream:\n"
      "      setup_events: [message_start, ping, meta]\n"
      "      content_events: [content_block_delta]\n"
      "  - name: plain\n"
      "    stream: {hold: false}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.stream.hold_max_bytes, 1000u);
  const core::StreamRules& a = r.config->rules[0].policy.stream;
  EXPECT_TRUE(a.hold);
  EXPECT_EQ(a.hold_max_bytes, 1000u);  // from defaults:
  EXPECT_EQ(a.setup_events, (std::vector<std::string>{"message_start", "ping", "meta"}));
  EXPECT_EQ(a.content_events, (std::vector<std::string>{"content_block_delta"}));
  EXPECT_EQ(r.config->rules[0].sources.at("stream.setup_events"), "test.yaml:8:21");
  EXPECT_EQ(r.config->rules[0].sources.at("stream.hold_max_bytes"), "test.yaml:3:28");
  EXPECT_FALSE(r.config->rules[1].policy.stream.hold);
  EXPECT_EQ(r.config->rules[1].sources.at("stream.hold"), "test.yaml:11:20");
}

TEST(YamlStream, EmptyListClearsTheSetupEvents) {
  const LoadResult r = load_yaml("version: 1\ndefaults:\n  stream: {setup_events: []}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config->defaults.stream.setup_events.empty());
}

TEST(YamlStream, Errors) {
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  stream: {hold: maybe}\n"),
            "test.yaml:3:18: defaults.stream.hold: expected true or false, got \"maybe\"");
  EXPECT_EQ(error_of("version: 1\nrules:\n  - stream: {hold_max_byte: 5}\n"),
            "test.yaml:3:14: rules[0].stream.hold_max_byte: unknown key; did you mean \"hold_max_bytes\"?");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  stream: {hold_max_bytes: -1}\n"),
            "test.yaml:3:28: defaults.stream.hold_max_bytes: -1 is out of range (expected bytes, 0..67108864)");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  stream: [hold]\n"),
            "test.yaml:3:11: defaults.stream: expected a map, got a list");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  stream: {setup_events: [ping, \"\"]}\n"),
            "test.yaml:3:33: defaults.stream.setup_events[1]: must not be empty");
  EXPECT_EQ(error_of("version: 1\ndefaults:\n  stream: {content_events: [\"a\\nb\"]}\n"),
            "test.yaml:3:29: defaults.stream.content_events[0]: an event type cannot contain a line break");
}

}  // namespace
}  // namespace curlretry::config
