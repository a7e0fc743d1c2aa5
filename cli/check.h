// `curlretry check [--config F]`: load the config exactly as the shim would, print the effective
// policy (defaults, each rule, settings) with the origin of every value. 0 = valid, 1 = invalid.
#pragma once

#include <optional>
#include <string>

namespace curlretry::cli {

struct CheckOptions {
  std::optional<std::string> config;
};

int run_check(const CheckOptions& options);

}  // namespace curlretry::cli
