// Every key a config sets, once: the dotted name `check` lists it under, the section of the file
// it lives in, and the environment variables that override it. The loader's accepted keys (and
// its "did you mean"), the built-in sources, the sources env overrides record, `check`'s listing
// and the key tables of config/REFERENCE.md are all derived from, or tested against, this table.
#pragma once

#include <string_view>
#include <vector>

namespace curlretry::config {

enum class KeyScope {
  policy,    // under `defaults:` and in each rule; `check` lists them per policy
  settings,  // under `settings:`
  fleet,     // under `fleet:`; `check` lists them with the settings as "fleet.*"
};

struct KeyDef {
  std::string_view name;  // dotted: "backoff.base_ms", "fleet.budget.percent"
  KeyScope scope;
  std::string_view env = {};         // the CURLRETRY_* variable that overrides it, if any
  std::string_view legacy_env = {};  // its BILI_REPLAY_* alias, if any
  bool in_file = true;               // false: only the environment sets it
};

inline constexpr KeyDef kKeys[] = {
    {"max_attempts", KeyScope::policy, "CURLRETRY_MAX_ATTEMPTS", "BILI_REPLAY_RETRY_MAX"},
    {"max_elapsed_ms", KeyScope::policy},
    {"backoff.strategy", KeyScope::policy},
    {"backoff.base_ms", KeyScope::policy, "CURLRETRY_BASE_MS", "BILI_REPLAY_RETRY_BASE_MS"},
    {"backoff.max_ms", KeyScope::policy, "CURLRETRY_MAX_DELAY_MS"},
    {"backoff.jitter", KeyScope::policy, "CURLRETRY_JITTER"},
    {"retry_after.honor", KeyScope::policy},
    {"retry_after.max_ms", KeyScope::policy},
    {"retry_on.status", KeyScope::policy},
    {"retry_on.body_markers", KeyScope::policy},
    {"retry_on.transport", KeyScope::policy},
    {"retry_on.unanswered_post", KeyScope::policy},
    {"never_retry.body_markers", KeyScope::policy},
    {"codes", KeyScope::policy},
    {"body_window", KeyScope::policy},
    {"stream.hold", KeyScope::policy},
    {"stream.hold_max_bytes", KeyScope::policy},
    {"stream.content_events", KeyScope::policy},
    {"stream.setup_events", KeyScope::policy},
    {"disable", KeyScope::settings, "CURLRETRY_DISABLE"},
    {"log", KeyScope::settings, "CURLRETRY_LOG"},
    {"log_file", KeyScope::settings, "CURLRETRY_LOG_FILE"},
    {"events_file", KeyScope::settings, "CURLRETRY_EVENTS"},
    {"max_upload_replay", KeyScope::settings},
    {"max_error_body", KeyScope::settings},
    {"persistent", KeyScope::settings, "CURLRETRY_PERSISTENT"},
    {"heartbeat_ms", KeyScope::settings},
    {"fleet.store", KeyScope::fleet, "CURLRETRY_FLEET"},
    {"fleet.hold_new", KeyScope::fleet},
    {"fleet.budget.percent", KeyScope::fleet},
    {"fleet.budget.window_ms", KeyScope::fleet},
    {"fleet.budget.reserve", KeyScope::fleet},
    {"fleet.dir", KeyScope::fleet, "CURLRETRY_FLEET_DIR", {}, false},
};

// The keys that name parts of a file rather than values: the top-level sections, a rule's parts,
// a `codes` table, a match, a fallback, an auth refresh, the proxy and its routes. Listed by the
// part that holds them, in the order an "unknown key" error lists them. With kKeys this is every
// key a file may write; the loader's check_keys() lists all come from here. In "rule", "*" stands
// for every policy key of kKeys (a rule sets any of them).
struct PartKey {
  std::string_view part;  // "" for the top level
  std::string_view key;
};

inline constexpr PartKey kPartKeys[] = {
    {"", "version"},  {"", "include"}, {"", "defaults"}, {"", "settings"},
    {"", "rules"},    {"", "fleet"},   {"", "proxy"},  // `include:` is read by include_merge.cpp first
    {"rule", "name"}, {"rule", "match"}, {"rule", "*"}, {"rule", "fallback"}, {"rule", "auth"},
    {"codes", "path"}, {"codes", "retry"}, {"codes", "permanent"},
    {"match", "host"}, {"match", "path"}, {"match", "method"}, {"match", "header"},
    {"fallback", "after"}, {"fallback", "on"}, {"fallback", "model"}, {"fallback", "url"},
    {"auth", "on"}, {"auth", "command"}, {"auth", "header"}, {"auth", "timeout_ms"},
    {"proxy", "routes"}, {"proxy", "token"}, {"proxy", "max_body_bytes"}, {"proxy", "intercept"},
    {"proxy", "upstream_ca_file"}, {"proxy", "forward"}, {"proxy", "tunnel_idle_ms"},
    {"proxy", "max_connections"}, {"proxy", "upstream_proxy"},
    {"proxy.forward", "allow_ports"}, {"proxy.forward", "allow_loopback"},
    {"proxy.route", "upstream"}, {"proxy.route", "env"},
};

// The keys `part` may hold, in table order ("rule" with its "*" spelled out).
std::vector<std::string_view> part_keys(std::string_view part);

// The names one level below `section` that a file may write, in table order, each once:
// (policy, "") -> max_attempts, ..., backoff, ...; (policy, "backoff") -> strategy, base_ms, ...;
// (fleet, "fleet.budget") -> percent, window_ms, reserve.
std::vector<std::string_view> file_keys(KeyScope scope, std::string_view section);

// The dotted name of the key the environment variable `variable` (or its alias) sets.
std::string_view key_set_by(std::string_view variable);

// The row of the key `name`, at compile time: a name the table does not have is a build error,
// not a silent "".
consteval const KeyDef& key_def(std::string_view name) {
  for (const KeyDef& key : kKeys) {
    if (key.name == name) return key;
  }
  throw "config::key_def: no such key in config::kKeys";
}

// The CURLRETRY_* variable that overrides the key `name` (empty: none), and its legacy alias.
// Both are string literals of the table, so .data() is a NUL-terminated C string.
consteval std::string_view env_of(std::string_view name) { return key_def(name).env; }
consteval std::string_view legacy_env_of(std::string_view name) { return key_def(name).legacy_env; }

}  // namespace curlretry::config
