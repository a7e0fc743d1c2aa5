// The CURLRETRY_* variables (and the legacy BILI_REPLAY_* aliases) read into one value, so the
// rest of config/ never calls getenv and tests can inject any environment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace curlretry::config {

// A value taken from the environment, with the variable it came from ("CURLRETRY_BASE_MS").
template <typename T>
struct FromEnv {
  T value;
  std::string variable;
};

struct EnvOverrides {
  std::optional<FromEnv<bool>> disable;
  std::optional<FromEnv<bool>> persistent;  // CURLRETRY_PERSISTENT
  std::optional<FromEnv<int>> max_attempts;
  std::optional<FromEnv<long long>> base_ms;
  std::optional<FromEnv<long long>> max_delay_ms;
  std::optional<FromEnv<core::Jitter>> jitter;
  std::optional<FromEnv<LogLevel>> log_level;
  std::optional<FromEnv<std::string>> log_file;
  std::optional<FromEnv<std::string>> events_file;
  std::optional<std::string> config_path;  // CURLRETRY_CONFIG
  std::optional<FromEnv<ParsedStore>> fleet_store;  // CURLRETRY_FLEET
  std::optional<FromEnv<std::string>> fleet_dir;    // CURLRETRY_FLEET_DIR
  std::optional<std::string> upstream_proxy;        // CURLRETRY_UPSTREAM_PROXY (proxy.upstream_proxy)
  std::optional<std::string> upstream_ca_file;      // CURLRETRY_UPSTREAM_CA_FILE (proxy.upstream_ca_file)
};

struct EnvReadResult {
  EnvOverrides overrides;
  std::string error;  // "CURLRETRY_MAX_ATTEMPTS=abc: not an integer (...)"; empty = fine
  std::vector<std::string> warnings;
};

// Reads every variable we know. A secure-execution environment reads nothing. Empty values count
// as unset (so `VAR= cmd` switches an inherited setting off). Never throws.
EnvReadResult read_env(const Environment& env);

// Applies the overrides to the defaults and to every rule (env beats the file), recording
// "env VAR" as the source of each value it sets.
void apply_env(const EnvOverrides& overrides, Config& config);

// Parsers shared with the YAML loader, so "info" or "on" mean the same in both places.
std::optional<LogLevel> log_level_from_string(std::string_view text);
// true/false yes/no on/off, any case. The environment also takes 1/0; YAML does not, because
// there `1` is a number.
std::optional<bool> bool_from_string(std::string_view text);

}  // namespace curlretry::config
