// The launcher: `curlretry [--config F] [-v] -- COMMAND [ARGS...]`. Validates the config, pins it
// for the child (absolute CURLRETRY_CONFIG), prepends libcurlretry.so to LD_PRELOAD and execs the
// command in place, so its pid, signals and exit status are the command's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace curlretry::cli {

struct LaunchOptions {
  std::optional<std::string> config;
  bool verbose = false;  // CURLRETRY_LOG=debug
  std::vector<std::string> command;
};

// Returns only on failure: 1 (bad config, no library), 126 (not executable), 127 (not found).
int run_launch(const LaunchOptions& options);

// `library` in front of `current` (an LD_PRELOAD value), unless it is already in the list.
std::string prepend_preload(const std::string& library, const char* current);

}  // namespace curlretry::cli
