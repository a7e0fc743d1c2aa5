// `curlretry check [--config F]`: load the config exactly as the shim would, print the effective
// policy (defaults, each rule, settings) with the origin of every value. 0 = valid, 1 = invalid.
// Several files (--config A --config B, include:) are listed in the order they apply.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"

namespace curlretry::cli {

struct CheckOptions {
  std::optional<std::string> config;  // one file or a ':'-separated list
  bool json = false;
};

// --json: one object, {"ok", "files", "settings", "defaults", "rules", "warnings"} on success
// ({"ok": false, "error", "warnings"} on failure, still exit 1). Each value is {"value", "source"}
// with the value as `check` prints it; each rule is {"name", "match", "from", "values"}.
std::string check_json(const config::LoadResult& result);

int run_check(const CheckOptions& options);

}  // namespace curlretry::cli
