#include "config/env.h"

#include <exception>

#include "config/keys.h"
#include "config/limits.h"
#include "config/upstream_proxy.h"
#include "core/ascii.h"

namespace curlretry::config {
namespace {

using core::ascii::lower;
using core::ascii::field_value;

// The value as it may appear in an error message: bounded, no control characters.
std::string printable(std::string_view value) {
  std::string out;
  for (const char c : value.substr(0, 64)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (value.size() > 64) out += "...";
  return out;
}

class Reader {
 public:
  explicit Reader(const Environment& env) : env_(env) {}

  // The value of `name`, or nullopt when unset or empty.
  std::optional<std::string> raw(const char* name) const {
    if (!env_.get) return std::nullopt;
    const char* value = env_.get(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  }

  // Sets `error` (once) to "NAME=VALUE: problem".
  void fail(const char* name, std::string_view value, std::string_view problem) {
    if (result.error.empty()) result.error = std::string(name) + "=" + printable(value) + ": " + std::string(problem);
  }

  // An integer within [min, max], or nullopt after fail().
  std::optional<long long> integer(const char* name, const std::string& value, long long min, long long max,
                                   std::string_view expected) {
    const ParsedInteger parsed = parse_integer(field_value(value));
    if (parsed.overflow) {
      fail(name, value, "too large (expected " + std::string(expected) + ")");
      return std::nullopt;
    }
    if (!parsed.value) {
      fail(name, value, "not an integer (expected " + std::string(expected) + ")");
      return std::nullopt;
    }
    if (*parsed.value < min || *parsed.value > max) {
      fail(name, value, "out of range (expected " + std::string(expected) + ")");
      return std::nullopt;
    }
    return parsed.value;
  }

  // The CURLRETRY_ variable, else its legacy alias; a warning when both are set.
  std::optional<std::pair<const char*, std::string>> with_alias(const char* name, const char* alias) {
    auto primary = raw(name);
    auto legacy = raw(alias);
    if (primary && legacy) {
      result.warnings.push_back(std::string(alias) + "=" + printable(*legacy) + " is ignored: " + name + "=" +
                                printable(*primary) + " is also set and wins");
    }
    if (primary) return std::make_pair(name, *primary);
    if (legacy) return std::make_pair(alias, *legacy);
    return std::nullopt;
  }

  EnvReadResult result;

 private:
  const Environment& env_;
};

constexpr std::string_view kAttemptsExpected = "-1 or a number >= 1";

// Every variable read here as config/keys.h names it, resolved at compile time.
constexpr const char* kDisableVar = env_of("disable").data();
constexpr const char* kPersistentVar = env_of("persistent").data();
constexpr const char* kMaxAttemptsVar = env_of("max_attempts").data();
constexpr const char* kMaxAttemptsAlias = legacy_env_of("max_attempts").data();
constexpr const char* kBaseMsVar = env_of("backoff.base_ms").data();
constexpr const char* kBaseMsAlias = legacy_env_of("backoff.base_ms").data();
constexpr const char* kMaxDelayMsVar = env_of("backoff.max_ms").data();
constexpr const char* kJitterVar = env_of("backoff.jitter").data();
constexpr const char* kLogVar = env_of("log").data();
constexpr const char* kLogFileVar = env_of("log_file").data();
constexpr const char* kEventsVar = env_of("events_file").data();
constexpr const char* kFleetVar = env_of("fleet.store").data();
constexpr const char* kFleetDirVar = env_of("fleet.dir").data();

}  // namespace

std::optional<LogLevel> log_level_from_string(std::string_view text) {
  const std::string name = lower(text);
  if (name == "off" || name == "none") return LogLevel::off;
  if (name == "error") return LogLevel::error;
  if (name == "warn" || name == "warning") return LogLevel::warn;
  if (name == "info") return LogLevel::info;
  if (name == "debug") return LogLevel::debug;
  return std::nullopt;
}

std::optional<bool> bool_from_string(std::string_view text) {
  const std::string name = lower(text);
  if (name == "true" || name == "yes" || name == "on") return true;
  if (name == "false" || name == "no" || name == "off") return false;
  return std::nullopt;
}

namespace {

// CURLRETRY_DISABLE and CURLRETRY_PERSISTENT: booleans that also take 1/0.
void read_switches(Reader& reader, EnvOverrides& out) {
  for (const char* name : {kDisableVar, kPersistentVar}) {
    auto value = reader.raw(name);
    if (!value) continue;
    const std::string_view text = field_value(*value);
    std::optional<bool> flag = text == "1" ? std::optional(true) : text == "0" ? std::optional(false)
                                                                               : bool_from_string(text);
    if (!flag) {
      reader.fail(name, *value, "not a boolean (expected 1/0, true/false, yes/no or on/off)");
    } else {
      (std::string_view(name) == kDisableVar ? out.disable : out.persistent) = FromEnv<bool>{*flag, name};
    }
  }
}

// The policy's overrides: attempts, backoff base and cap, jitter.
void read_policy(Reader& reader, EnvOverrides& out) {
  if (auto found = reader.with_alias(kMaxAttemptsVar, kMaxAttemptsAlias)) {
    const auto& [name, value] = *found;
    const bool legacy = std::string_view(name) == kMaxAttemptsAlias;
    // The legacy tool took 0 to mean "no retries"; keep that meaning instead of rejecting it.
    const std::string_view expected = legacy ? "-1, 0 or a number >= 1" : kAttemptsExpected;
    if (auto n = reader.integer(name, value, -1, kMaxAttempts, expected)) {
      if (*n == 0 && !legacy) {
        reader.fail(name, value, "out of range (expected " + std::string(kAttemptsExpected) + ")");
      } else {
        out.max_attempts = FromEnv<int>{*n == 0 ? 1 : static_cast<int>(*n), name};
      }
    }
  }

  if (auto found = reader.with_alias(kBaseMsVar, kBaseMsAlias)) {
    const auto& [name, value] = *found;
    if (auto n = reader.integer(name, value, 0, kMaxMillis, "milliseconds >= 0")) {
      out.base_ms = FromEnv<long long>{*n, name};
    }
  }

  if (auto value = reader.raw(kMaxDelayMsVar)) {
    if (auto n = reader.integer(kMaxDelayMsVar, *value, 0, kMaxMillis, "milliseconds >= 0")) {
      out.max_delay_ms = FromEnv<long long>{*n, kMaxDelayMsVar};
    }
  }

  if (auto value = reader.raw(kJitterVar)) {
    if (auto jitter = core::jitter_from_string(lower(field_value(*value)))) {
      out.jitter = FromEnv<core::Jitter>{*jitter, kJitterVar};
    } else {
      reader.fail(kJitterVar, *value, "unknown jitter (expected none, full, equal or decorrelated)");
    }
  }
}

// Where curlretry writes (log level and file, attempt log) and which config file it reads.
void read_outputs(Reader& reader, EnvOverrides& out) {
  if (auto value = reader.raw(kLogVar)) {
    if (auto level = log_level_from_string(field_value(*value))) {
      out.log_level = FromEnv<LogLevel>{*level, kLogVar};
    } else {
      reader.fail(kLogVar, *value, "unknown log level (expected off, error, warn, info or debug)");
    }
  }
  if (auto value = reader.raw(kLogFileVar)) out.log_file = FromEnv<std::string>{*value, kLogFileVar};
  if (auto value = reader.raw(kEventsVar)) out.events_file = FromEnv<std::string>{*value, kEventsVar};
  if (auto value = reader.raw("CURLRETRY_CONFIG")) out.config_path = *value;
}

// The fleet's store and its directory.
void read_fleet(Reader& reader, EnvOverrides& out) {
  if (auto value = reader.raw(kFleetVar)) {
    std::string why;
    if (auto store = parse_fleet_store(*value, why)) {
      out.fleet_store = FromEnv<ParsedStore>{*store, kFleetVar};
    } else {
      reader.fail(kFleetVar, *value, why);
    }
  }
  if (auto value = reader.raw(kFleetDirVar)) {
    if ((*value)[0] == '/') {
      out.fleet_dir = FromEnv<std::string>{*value, kFleetDirVar};
    } else {
      reader.fail(kFleetDirVar, *value, "not an absolute path");
    }
  }
}

// The proxy of the user's own that `curlretry proxy` goes through. Its value is never shown, in an
// error either: it may carry a password.
void read_upstream_proxy(Reader& reader, EnvOverrides& out) {
  const auto value = reader.raw(kUpstreamProxyVariable);
  if (!value) return;
  const std::string problem = upstream_proxy_problem(*value);
  if (problem.empty()) {
    out.upstream_proxy = *value;
  } else if (reader.result.error.empty()) {
    reader.result.error = std::string(kUpstreamProxyVariable) + ": " + problem + " (the value is not shown)";
  }
}

void read_upstream_ca_file(Reader& reader, EnvOverrides& out) {
  const auto value = reader.raw(kUpstreamCaFileVariable);
  if (!value) return;
  if ((*value)[0] == '/') {
    out.upstream_ca_file = *value;
  } else {
    reader.fail(kUpstreamCaFileVariable, *value, "not an absolute path");
  }
}

}  // namespace

EnvReadResult read_env(const Environment& env) {
  Reader reader(env);
  if (env.secure) return std::move(reader.result);
  try {
    EnvOverrides& out = reader.result.overrides;
    read_switches(reader, out);
    read_policy(reader, out);
    read_outputs(reader, out);
    read_fleet(reader, out);
    read_upstream_proxy(reader, out);
    read_upstream_ca_file(reader, out);
  } catch (const std::exception& e) {
    reader.result.error = std::string("cannot read the environment: ") + e.what();
  }
  return std::move(reader.result);
}

}  // namespace curlretry::config

namespace curlretry::config {
namespace {

// An override that is set: `set` stores its value, and "env VARIABLE" becomes the source of the
// key that variable sets (config/keys.h).
template <typename T, typename Set>
void take(const std::optional<FromEnv<T>>& from, Sources& sources, Set set) {
  if (!from) return;
  set(from->value);
  sources[std::string(key_set_by(from->variable))] = "env " + from->variable;
}

void apply_to_policy(const EnvOverrides& env, core::Policy& policy, Sources& sources) {
  take(env.max_attempts, sources, [&](int n) { policy.max_attempts = n; });
  take(env.base_ms, sources, [&](long long ms) { policy.backoff.base = core::Millis{ms}; });
  take(env.max_delay_ms, sources, [&](long long ms) { policy.backoff.max = core::Millis{ms}; });
  take(env.jitter, sources, [&](core::Jitter j) { policy.backoff.jitter = j; });
}

}  // namespace

void apply_env(const EnvOverrides& env, Config& config) {
  apply_to_policy(env, config.defaults, config.default_sources);
  for (Rule& rule : config.rules) apply_to_policy(env, rule.policy, rule.sources);
  Settings& s = config.settings;
  Sources& src = config.settings_sources;
  take(env.disable, src, [&](bool on) { s.disabled = on; });
  take(env.persistent, src, [&](bool on) { s.persistent = on; });
  take(env.log_level, src, [&](LogLevel level) { s.log_level = level; });
  take(env.log_file, src, [&](const std::string& path) { s.log_file = path; });
  take(env.events_file, src, [&](const std::string& path) { s.events_file = path; });
  take(env.fleet_store, src, [&](const ParsedStore& store) {
    s.fleet.store = store.store;
    s.fleet.redis_url = store.redis_url;
  });
  take(env.fleet_dir, src, [&](const std::string& dir) { s.fleet.dir = dir; });
  // Proxy keys: like the rest of `proxy:`, no source is recorded (`check` lists policy and settings).
  if (env.upstream_proxy) config.proxy.upstream_proxy = *env.upstream_proxy;
  if (env.upstream_ca_file) config.proxy.upstream_ca_file = *env.upstream_ca_file;
}

}  // namespace curlretry::config
