// Presets that combine: a repeated --config (CURLRETRY_CONFIG=A:B) and `include:`.
#include "config/include_merge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_env.h"

namespace curlretry::config {
namespace {

namespace fs = std::filesystem;
using testing::FakeEnv;

class IncludeMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/curlretry-include-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string write(const std::string& relative, const std::string& text) {
    const std::string path = root_ + "/" + relative;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }

  std::string root_;
};

TEST_F(IncludeMerge, LaterFileWinsKeyByKeyAndRulesConcatenate) {
  const std::string base = write("presets/base.yaml",
                                 "version: 1\n"
                                 "defaults:\n"
                                 "  max_attempts: 4\n"
                                 "  backoff: {base_ms: 100, max_ms: 5000}\n"
                                 "settings:\n"
                                 "  log: warn\n"
                                 "rules:\n"
                                 "  - name: glm\n"
                                 "    match: {host: open.bigmodel.cn}\n"
                                 "    max_attempts: 6\n");
  const std::string mine = write("mine.yaml",
                                 "version: 1\n"
                                 "include: [presets/base.yaml]\n"
                                 "defaults:\n"
                                 "  backoff: {base_ms: 20}\n"
                                 "rules:\n"
                                 "  - name: local\n"
                                 "    match: {host: 127.0.0.1}\n");
  const LoadResult r = load_files({mine}, "--config");
  ASSERT_TRUE(r.ok()) << r.error;
  const Config& c = *r.config;
  EXPECT_EQ(c.files, (std::vector<std::string>{base, mine}));
  EXPECT_EQ(c.file, mine);
  EXPECT_EQ(c.defaults.max_attempts, 4);
  EXPECT_EQ(c.defaults.backoff.base.count(), 20);
  EXPECT_EQ(c.defaults.backoff.max.count(), 5000);
  EXPECT_EQ(c.default_sources.at("max_attempts"), base + ":3:17");
  EXPECT_EQ(c.default_sources.at("backoff.base_ms"), mine + ":4:22");
  EXPECT_EQ(c.settings.log_level, LogLevel::warn);
  EXPECT_EQ(c.settings_sources.at("log"), base + ":6:8");
  ASSERT_EQ(c.rules.size(), 2u);
  EXPECT_EQ(c.rules[0].name, "glm");
  EXPECT_EQ(c.rules[0].where, base + ":8:5");
  EXPECT_EQ(c.rules[0].policy.max_attempts, 6);
  // A rule takes the combined defaults, not only those of its own file.
  EXPECT_EQ(c.rules[0].policy.backoff.base.count(), 20);
  EXPECT_EQ(c.rules[1].name, "local");
  EXPECT_EQ(c.rules[1].where, mine + ":6:5");
  EXPECT_EQ(c.rules[1].policy.max_attempts, 4);
}

TEST_F(IncludeMerge, TheListInCurlretryConfigIsReadInOrder) {
  const std::string a = write("a.yaml", "version: 1\ndefaults: {max_attempts: 2, max_elapsed_ms: 1000}\n");
  const std::string b = write("b.yaml", "version: 1\ndefaults: {max_attempts: 5}\n");
  FakeEnv env;
  env.vars["CURLRETRY_CONFIG"] = a + ":" + b;
  const LoadResult r = load(env.env());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 5);
  EXPECT_EQ(r.config->defaults.max_elapsed.count(), 1000);
  EXPECT_EQ(r.config->file, a + ":" + b);
  env.vars["CURLRETRY_CONFIG"] = b + ":" + a;
  EXPECT_EQ(load(env.env()).config->defaults.max_attempts, 2);
}

TEST_F(IncludeMerge, ANullSectionLeavesTheEarlierOne) {
  const std::string a = write("a.yaml", "version: 1\ndefaults: {max_attempts: 2}\nrules:\n  - name: x\n");
  const std::string b = write("b.yaml", "version: 1\ndefaults:\nrules:\n");
  const LoadResult r = load_files({a, b}, "--config");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->defaults.max_attempts, 2);
  EXPECT_EQ(r.config->rules.size(), 1u);
}

TEST_F(IncludeMerge, ACycleIsAnErrorAtTheIncludeItem) {
  const std::string a = write("a.yaml", "version: 1\ninclude: b.yaml\n");
  const std::string b = write("b.yaml", "version: 1\ninclude:\n  - a.yaml\n");
  const LoadResult r = load_files({a}, "--config");
  EXPECT_EQ(r.error, b + ":3:5: include: cycle: " + a + " -> " + b + " -> " + root_ + "/a.yaml");
}

TEST_F(IncludeMerge, AMissingIncludeIsAnErrorAtTheIncludeItem) {
  const std::string a = write("a.yaml", "version: 1\ninclude: [ok.yaml, nope.yaml]\n");
  write("ok.yaml", "version: 1\n");
  const LoadResult r = load_files({a}, "--config");
  EXPECT_EQ(r.error, a + ":2:20: include: cannot read " + root_ + "/nope.yaml: No such file or directory");
}

TEST_F(IncludeMerge, ErrorsNameTheFileTheyAreIn) {
  const std::string a = write("a.yaml", "version: 1\nrules:\n  - name: glm\n");
  const std::string b = write("b.yaml", "version: 1\ndefaults:\n  max_attemps: 3\n");
  EXPECT_EQ(load_files({a, b}, "--config").error,
            b + ":3:3: defaults.max_attemps: unknown key; did you mean \"max_attempts\"?");
  const std::string c = write("c.yaml", "version: 1\nrules:\n  - name: glm\n");
  EXPECT_EQ(load_files({a, c}, "--config").error, c + ":3:11: rules[1].name: duplicate rule name \"glm\"");
  const std::string d = write("d.yaml", "version: 1\ninclude: {a: 1}\n");
  EXPECT_EQ(load_files({d}, "--config").error, d + ":2:10: include: expected a list of files, got a map");
}

TEST_F(IncludeMerge, AFileIncludedTwiceAppliesOnce) {
  write("common.yaml", "version: 1\nrules:\n  - name: common\n    match: {host: a}\n");
  const std::string x = write("x.yaml", "version: 1\ninclude: [common.yaml]\n");
  const std::string y = write("y.yaml", "version: 1\ninclude: [common.yaml]\n");
  const LoadResult r = load_files({x, y}, "--config");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->rules.size(), 1u);
}

TEST_F(IncludeMerge, IncludeOnlyFromAFile) {
  EXPECT_EQ(testing::load_yaml("version: 1\ninclude: [a.yaml]\n").error,
            "test.yaml:2:10: include: only a config file can include others (load it from a file)");
}

TEST(ConfigList, SplitsOnColons) {
  EXPECT_EQ(split_config_list("a.yaml:/b/c.yaml"), (std::vector<std::string>{"a.yaml", "/b/c.yaml"}));
  EXPECT_EQ(split_config_list("a.yaml::"), (std::vector<std::string>{"a.yaml"}));
  EXPECT_TRUE(split_config_list("").empty());
}

}  // namespace
}  // namespace curlretry::config
