// YAML file + environment -> the retry policy of each request. The only place that knows the
// config file format and the CURLRETRY_* / BILI_REPLAY_* variables.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/agent.h"
#include "config/fleet_settings.h"
#include "config/proxy_settings.h"
#include "core/policy.h"

namespace curlretry::config {

enum class LogLevel : std::uint8_t { off, error, warn, info, debug };
std::string_view to_string(LogLevel level);

// Where a value came from, for `curlretry check`: "built-in", "/etc/x.yaml:12:5",
// "env CURLRETRY_MAX_ATTEMPTS".
using Sources = std::map<std::string, std::string>;  // dotted key -> origin

struct Match {
  std::string host;    // glob, case-insensitive; empty = any
  std::string path;    // glob on the path without query; empty = any
  std::string method;  // exact, case-insensitive; empty = any
  std::vector<HeaderMatch> headers;  // all must match; empty = any
};

struct Rule {
  std::string name;
  std::string where;  // "FILE:LINE:COL" of the rule's item, for `curlretry check`
  Match match;
  core::Policy policy;  // defaults, overlaid by the rule's keys, overlaid by env
  Sources sources;
  Fallback fallback;
  AuthRefresh auth;
};

// Process-wide settings (not per rule).
struct Settings {
  bool disabled = false;
  LogLevel log_level = LogLevel::info;
  std::string log_file;     // empty = stderr
  std::string events_file;  // CURLRETRY_EVENTS, empty = none
  std::size_t max_upload_replay = 8 * 1024 * 1024;  // bounded tee of read-callback uploads
  std::size_t max_error_body = 64 * 1024;           // held body of a failure candidate
  bool persistent = false;    // unattended: retry retryable classes without an attempt limit
  long long heartbeat_ms = 30000;  // a wait longer than this says "still waiting" once per period
  FleetSettings fleet;  // the `fleet:` section; its Sources keys are "fleet.*"
};

struct Config {
  std::string file;  // the file(s) named, ':'-separated as in CURLRETRY_CONFIG; empty = built-in only
  std::vector<std::string> files;  // every file read, includes first, in the order they apply
  core::Policy defaults;
  Sources default_sources;
  std::vector<Rule> rules;
  Settings settings;
  Sources settings_sources;
  ProxySettings proxy;  // `proxy:`, read by `curlretry proxy` only

  // The first rule whose match fits, or nullptr for the defaults. Rules with `match.header`
  // never fit when `headers` is nullptr.
  const Rule* match(std::string_view method, std::string_view host, std::string_view path,
                    const RequestHeaders* headers = nullptr) const;
  // Some rule matches on request headers: the shim reads the program's header list only then.
  bool has_header_rules() const;
  const core::Policy& policy_for(std::string_view method, std::string_view host, std::string_view path) const;
};

// The process environment, injectable for tests.
struct Environment {
  std::function<const char*(const char*)> get;  // getenv-like; may return nullptr
  bool secure = false;  // AT_SECURE: ignore env and user config
  std::string home;     // for ~/.config lookup; empty = use get("HOME")
  std::string system_file = "/etc/curlretry/config.yaml";  // the last fallback; tests point it elsewhere

  static Environment process();  // getenv + getauxval(AT_SECURE)
};

struct LoadResult {
  std::optional<Config> config;       // set on success
  std::string error;                  // one complete sentence naming file:line:col or the variable
  std::vector<std::string> warnings;  // e.g. both BILI_REPLAY_RETRY_MAX and CURLRETRY_MAX_ATTEMPTS set
  bool ok() const { return config.has_value(); }
};

// Finds the file ($CURLRETRY_CONFIG, $XDG_CONFIG_HOME/curlretry/config.yaml,
// ~/.config/curlretry/config.yaml, /etc/curlretry/config.yaml; `explicit_path` first when given),
// parses it and applies env. No file = built-in defaults + env.
LoadResult load(const Environment& env, const std::optional<std::string>& explicit_path = std::nullopt);

// Parses YAML text as if read from `name` (used in error messages), then applies env.
LoadResult load_from_string(std::string_view yaml, std::string_view name, const Environment& env);

}  // namespace curlretry::config
