// Typed, bounded reads of YAML nodes for the loader. Every failure throws ConfigError carrying the
// finished message "NAME:LINE:COL: KEY: problem"; the loader's entry point turns it into a
// LoadResult, so nothing escapes config::load.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/yaml_tree.h"

namespace curlretry::config {

struct ConfigError {
  std::string message;
};

class Values {
 public:
  explicit Values(std::string_view file) : file_(file) {}

  const std::string& file() const { return file_; }

  // "NAME:LINE:COL", also the Source of a value read from the file.
  std::string where(const YamlNode& node) const;

  [[noreturn]] void fail(const YamlNode& node, std::string_view key, std::string_view problem) const;

  // Every key of `map` must be in `known`; an unknown one fails, suggesting the closest.
  void check_keys(const YamlNode& map, std::string_view key, std::span<const std::string_view> known) const;

  // A map, or an empty map for null when `null_is_empty` (a section with everything commented out).
  void expect_map(const YamlNode& node, std::string_view key, bool null_is_empty = false) const;

  long long integer(const YamlNode& node, std::string_view key, long long min, long long max,
                    std::string_view expected) const;
  long long millis(const YamlNode& node, std::string_view key) const;  // 0..kMaxMillis
  bool boolean(const YamlNode& node, std::string_view key) const;
  std::string string(const YamlNode& node, std::string_view key) const;  // any scalar, as text
  std::vector<std::string> strings(const YamlNode& node, std::string_view key, bool allow_empty_items) const;

 private:
  std::string file_;
};

// "defaults" + "backoff" -> "defaults.backoff"; "rules[0]" + "" -> "rules[0]".
std::string join_key(std::string_view parent, std::string_view child);

}  // namespace curlretry::config
