// Hostile or mangled files must end in an error or a config, never a crash, hang or exception:
// the shim parses them inside other people's processes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "test_env.h"

namespace curlretry::config {
namespace {

constexpr const char* kSeed = R"(version: 1
defaults:
  max_attempts: 3
  backoff: {strategy: exponential, base_ms: 1500, max_ms: 60000, jitter: none}
  retry_after: {honor: true, max_ms: 120000}
  retry_on: {status: [408, 429, 503], body_markers: [captcha, "风控"], transport: [reset]}
  never_retry: {body_markers: [daily quota]}
  codes: [{path: error.code, retry: ["1302"], permanent: ["1113"]}]
settings: {log: info, log_file: ""}
rules:
  - name: glm
    match: {host: "open.bigmodel.cn", path: "/api/*", method: POST}
    max_attempts: 5
)";

// Deterministic, so a failure reproduces.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

TEST(YamlRobustness, ThousandsOfMutatedFilesNeverCrashOrThrow) {
  const char* tokens[] = {"[", "]", "{", "}", ":", ",", "- ", "&a ", "*a", "!!str ", "\"", "'", "\n", "  ", "#",
                          "? ", "|", ">", "\t", "\xff", "\xe9", "%YAML 1.2\n", "---\n", "...\n", "\\", "-1",
                          "99999999999999999999", "~", "null"};
  Rng rng{42};
  const std::string seed = kSeed;
  const auto start = std::chrono::steady_clock::now();
  int ok = 0, errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = seed;
    const int mutations = 1 + static_cast<int>(rng.next() % 6);
    for (int m = 0; m < mutations; ++m) {
      const std::size_t pos = s.empty() ? 0 : rng.next() % s.size();
      switch (rng.next() % 4) {
        case 0: s.insert(pos, tokens[rng.next() % std::size(tokens)]); break;
        case 1: s.erase(pos, 1 + rng.next() % 5); break;
        case 2: if (!s.empty()) s[pos] = static_cast<char>(rng.next()); break;
        default: s.insert(pos, s.substr(s.empty() ? 0 : rng.next() % s.size(), rng.next() % 40)); break;
      }
    }
    LoadResult r;
    ASSERT_NO_THROW(r = testing::load_yaml(s)) << s;
    if (r.ok()) {
      ++ok;
    } else {
      ++errors;
      ASSERT_FALSE(r.error.empty()) << s;
      ASSERT_EQ(r.error.rfind("test.yaml", 0), 0u) << r.error;
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(YamlRobustness, PathologicalShapesAreBounded) {
  const auto start = std::chrono::steady_clock::now();
  // A very long scalar, many keys, a long flow list, many rules: all within the 1 MiB bound.
  EXPECT_FALSE(testing::load_yaml("version: 1\nx: " + std::string(1000000, 'a') + "\n").ok());
  std::string many_keys = "version: 1\nsettings:\n";
  for (int i = 0; i < 20000; ++i) many_keys += "  k" + std::to_string(i) + ": 1\n";
  EXPECT_FALSE(testing::load_yaml(many_keys).ok());
  std::string long_list = "version: 1\ndefaults:\n  retry_on:\n    status: [";
  for (int i = 0; i < 100000; ++i) long_list += "503,";
  long_list += "503]\n";
  EXPECT_TRUE(testing::load_yaml(long_list).ok());
  std::string many_rules = "version: 1\nrules:\n";
  for (int i = 0; i < 5000; ++i)
    many_rules += "  - {name: r" + std::to_string(i) + ", match: {host: h" + std::to_string(i) + "}}\n";
  const LoadResult r = testing::load_yaml(many_rules);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->rules.size(), 5000u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace curlretry::config
