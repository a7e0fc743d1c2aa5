// config/REFERENCE.md promises that its complete example loads and that its `defaults:` are the
// built-in values. Pinned here so the document cannot drift from the code.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

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

TEST(ReferenceDoc, CompleteExampleLoadsAndItsDefaultsAreTheBuiltIns) {
  std::ifstream in(std::string(CURLRETRY_SOURCE_DIR) + "/config/REFERENCE.md");
  ASSERT_TRUE(in) << "config/REFERENCE.md not found";
  std::stringstream text;
  text << in.rdbuf();
  const std::string yaml = first_yaml_block(text.str());
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
