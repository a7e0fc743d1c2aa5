// config/REFERENCE.md promises that its complete example loads, that its `defaults:` are the
// built-in values, and its key tables list exactly the keys of config/keys.h. Pinned here so the
// document cannot drift from the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "config/keys.h"
#include "test_env.h"

namespace curlretry::config {
namespace {

std::string first_yaml_block(const std::string& markdown) {
  const std::string open = "```yaml\n";
  const auto start = markdown.find(open);
  if (start == std::string::npos) return {};
  const auto end = markdown.find("```", start + open.size());
  return markdown.substr(start + open.size(), end - start - open.size());
}

std::string reference() {
  std::ifstream in(std::string(CURLRETRY_SOURCE_DIR) + "/config/REFERENCE.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first column of the first table after the line `heading`, without backticks.
std::vector<std::string> first_table_keys(const std::string& markdown, const std::string& heading) {
  std::vector<std::string> keys;
  auto at = markdown.find("\n" + heading + "\n");
  if (at == std::string::npos) return keys;
  at = markdown.find("\n|", at);
  bool header = true;
  while (at != std::string::npos && at + 1 < markdown.size() && markdown[at + 1] == '|') {
    const auto end = markdown.find('\n', at + 1);
    const std::string row = markdown.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    at = end;
    if (header || row.starts_with("|-")) {
      header = false;
      continue;
    }
    std::string cell = row.substr(1, row.find('|', 1) - 1);
    std::erase(cell, '`');
    std::erase(cell, ' ');
    keys.push_back(cell);
  }
  return keys;
}

std::vector<std::string> keys_of(KeyScope scope, std::string_view strip = "") {
  std::vector<std::string> out;
  for (const KeyDef& key : kKeys) {
    if (key.scope == scope && key.in_file) out.emplace_back(key.name.substr(strip.size()));
  }
  return out;
}

TEST(ReferenceDoc, KeyTablesListExactlyTheKeysOfTheTable) {
  const std::string doc = reference();
  ASSERT_FALSE(doc.empty()) << "config/REFERENCE.md not found";
  EXPECT_EQ(first_table_keys(doc, "## Policy keys (in `defaults:` and in each rule)"), keys_of(KeyScope::policy));
  EXPECT_EQ(first_table_keys(doc, "## Settings"), keys_of(KeyScope::settings));
  EXPECT_EQ(first_table_keys(doc, "## Fleet"), keys_of(KeyScope::fleet, "fleet."));
  const std::vector<std::string> variables = first_table_keys(doc, "## Environment variables");
  for (const KeyDef& key : kKeys) {
    for (const std::string_view variable : {key.env, key.legacy_env}) {
      if (variable.empty()) continue;
      EXPECT_NE(std::find(variables.begin(), variables.end(), variable), variables.end()) << variable;
    }
  }
}

TEST(ReferenceDoc, CompleteExampleLoadsAndItsDefaultsAreTheBuiltIns) {
  const std::string doc = reference();
  ASSERT_FALSE(doc.empty()) << "config/REFERENCE.md not found";
  const std::string yaml = first_yaml_block(doc);
  ASSERT_FALSE(yaml.empty());

  const LoadResult r = testing::load_yaml(yaml);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.warnings.empty());
  const core::Policy& d = r.config->defaults;
  const core::Policy b = core::Policy::builtin();
  EXPECT_EQ(d.max_attempts, b.max_attempts);
  EXPECT_EQ(d.max_elapsed, b.max_elapsed);
  EXPECT_EQ(d.backoff.strategy, b.backoff.strategy);
  EXPECT_EQ(d.backoff.base, b.backoff.base);
  EXPECT_EQ(d.backoff.max, b.backoff.max);
  EXPECT_EQ(d.backoff.jitter, b.backoff.jitter);
  EXPECT_EQ(d.honor_retry_after, b.honor_retry_after);
  EXPECT_EQ(d.max_retry_after, b.max_retry_after);
  EXPECT_EQ(d.retry_status, b.retry_status);
  EXPECT_EQ(d.retry_markers, b.retry_markers);
  EXPECT_EQ(d.retry_transport, b.retry_transport);
  EXPECT_EQ(d.permanent_markers, b.permanent_markers);
  EXPECT_EQ(d.codes.size(), b.codes.size());
  EXPECT_EQ(d.body_window, b.body_window);
  EXPECT_EQ(d.stream.hold, b.stream.hold);
  EXPECT_EQ(d.stream.hold_max_bytes, b.stream.hold_max_bytes);
  EXPECT_EQ(d.stream.content_events, b.stream.content_events);
  EXPECT_EQ(d.stream.setup_events, b.stream.setup_events);
  const Settings s;
  EXPECT_EQ(r.config->settings.max_upload_replay, s.max_upload_replay);
  EXPECT_EQ(r.config->settings.max_error_body, s.max_error_body);
  EXPECT_EQ(r.config->settings.log_level, s.log_level);
  ASSERT_EQ(r.config->rules.size(), 1u);
  EXPECT_EQ(r.config->rules[0].name, "glm");
}

}  // namespace
}  // namespace curlretry::config
