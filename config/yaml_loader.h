// YAML text -> Config, before the environment is applied. Strict: every key known, every value
// typed and bounded; the first problem becomes "NAME:LINE:COL: KEY: message".
#pragma once

#include <span>
#include <string_view>

#include "config/config.h"
#include "config/yaml_tree.h"

namespace curlretry::config {

// Never throws. `name` is the file name used in errors and Sources.
LoadResult parse_config(std::string_view yaml, std::string_view name);

// The same for a tree already parsed (and perhaps combined from several files: include_merge.h).
LoadResult parse_config_tree(const YamlNode& root, std::string_view name);

// core::Policy::builtin() with every Source "built-in": the config when no file is found.
Config builtin_config();

// The closest of `candidates` to `word` by edit distance, when close enough to be a likely typo.
std::optional<std::string_view> closest_key(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace curlretry::config
