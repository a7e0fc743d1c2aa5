// The launcher: `curlretry [FLAGS] [--] COMMAND [ARGS...]`. Turns its flags into the CURLRETRY_*
// variables of the same settings, validates the config, pins it for the child (absolute
// CURLRETRY_CONFIG), prepends libcurlretry.so to LD_PRELOAD and execs the command in place, so its
// pid, signals and exit status are the command's own.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "preload/ld_preload.h"

namespace curlretry::cli {

// The launcher's own failures, as `env` and `timeout` use them.
constexpr int kLaunchError = 125;
constexpr int kCannotExecute = 126;
constexpr int kCommandNotFound = 127;

struct LaunchOptions {
  std::vector<std::string> configs;  // --config, in order
  bool verbose = false;              // CURLRETRY_LOG=debug
  bool quiet = false;                // CURLRETRY_LOG=warn: only give-ups and errors
  std::optional<std::string> max_attempts;  // -n, CURLRETRY_MAX_ATTEMPTS
  std::optional<std::string> base_ms;       // CURLRETRY_BASE_MS
  std::optional<std::string> max_delay_ms;  // CURLRETRY_MAX_DELAY_MS
  std::optional<std::string> jitter;        // CURLRETRY_JITTER
  std::optional<std::string> log_file;      // CURLRETRY_LOG_FILE
  std::optional<std::string> events;        // CURLRETRY_EVENTS
  bool proxy = false;                       // --proxy: run COMMAND through the shared local proxy
  std::optional<std::string> listen;        // --listen HOST:PORT of that proxy (--proxy, or the automatic path)
  bool no_proxy = false;                    // --no-proxy: never the automatic path
  // Set (by the launcher's caller, cli/launch_auto.h) when COMMAND will not load libcurl: why it
  // runs through the shared proxy with the built-in providers intercepted.
  std::optional<std::string> proxy_reason;
  bool base_url_routes = false;  // with proxy_reason: the built-in base-URL routes too
  std::vector<std::string> command;
};

// The launcher's Usage line for --proxy.
constexpr const char* kProxyLaunchUsage = "--proxy [--listen HOST:PORT] [--config F]... [--] COMMAND [ARGS...]";

// Why `options` cannot go together: --listen without --proxy (unless the automatic path takes
// COMMAND to the proxy), --proxy with --no-proxy, or --proxy with a flag that sets a policy or a
// log (it would reach only the command's libcurl children, never a shared proxy that already
// runs); nullopt when they can.
std::optional<std::string> proxy_conflict(const LaunchOptions& options);

// A flag of the launcher and the variable it sets.
struct FlagVariable {
  std::string flag;      // "--max-attempts"
  std::string variable;  // "CURLRETRY_MAX_ATTEMPTS"
  std::string value;
};

// The variables the flags set, in a fixed order (values unchecked: config::load checks them).
std::vector<FlagVariable> flag_variables(const LaunchOptions& options);

// An error of config::load that names a variable a flag set, reworded to name the flag:
// "CURLRETRY_MAX_ATTEMPTS=abc: not an integer" -> "--max-attempts abc: not an integer".
std::string name_the_flag(const std::string& error, const std::vector<FlagVariable>& flags);

// Returns only on failure: 125 (no command, bad config, no library), 126 (not executable),
// 127 (not found). With --proxy it execs `curlretry-proxy --ensure [--config F] -- COMMAND...`
// instead of COMMAND, after validating the config the same way.
int run_launch(const LaunchOptions& options);

// When COMMAND is curl with --retry N or --retry-all-errors, one line saying that the two retry
// layers multiply (`max_attempts` is curlretry's, -1 = unlimited); nullopt otherwise.
std::optional<std::string> stacking_warning(const std::vector<std::string>& command, int max_attempts);

// preload/ld_preload.h, shared with the proxy.
using preload::prepend_preload;

}  // namespace curlretry::cli
