#include "cli/describe.h"

#include "cli/json.h"

namespace curlretry::cli {
namespace {

std::string list_of_strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_quote(items[i]);
  return out + "]";
}

std::string millis(core::Millis ms) { return std::to_string(ms.count()); }

std::string codes(const std::vector<core::CodeTable>& tables) {
  std::string out = "[";
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    out += (i ? ", " : "");
    out += "{path: " + t.path + ", retry: " + list_of_strings(t.retry) + ", permanent: " + list_of_strings(t.permanent) +
           "}";
  }
  return out + "]";
}

}  // namespace

KeyValues describe_policy(const core::Policy& p) {
  std::string statuses = "[";
  for (std::size_t i = 0; i < p.retry_status.size(); ++i) statuses += (i ? ", " : "") + std::to_string(p.retry_status[i]);
  statuses += "]";
  std::string transports = "[";
  for (std::size_t i = 0; i < p.retry_transport.size(); ++i) {
    transports += (i ? ", " : "") + std::string(core::to_string(p.retry_transport[i]));
  }
  transports += "]";
  std::string attempts = std::to_string(p.max_attempts);
  if (p.max_attempts == -1) attempts += " (unlimited)";
  if (p.max_attempts == 1) attempts += " (never retry)";
  return {
      {"max_attempts", attempts},
      {"max_elapsed_ms", millis(p.max_elapsed)},
      {"backoff.strategy", std::string(core::to_string(p.backoff.strategy))},
      {"backoff.base_ms", millis(p.backoff.base)},
      {"backoff.max_ms", millis(p.backoff.max)},
      {"backoff.jitter", std::string(core::to_string(p.backoff.jitter))},
      {"retry_after.honor", p.honor_retry_after ? "true" : "false"},
      {"retry_after.max_ms", millis(p.max_retry_after)},
      {"retry_on.status", statuses},
      {"retry_on.body_markers", list_of_strings(p.retry_markers)},
      {"retry_on.transport", transports},
      {"never_retry.body_markers", list_of_strings(p.permanent_markers)},
      {"codes", codes(p.codes)},
      {"body_window", std::to_string(p.body_window)},
  };
}

KeyValues describe_settings(const config::Settings& s) {
  return {
      {"disable", s.disabled ? "true" : "false"},
      {"log", std::string(config::to_string(s.log_level))},
      {"log_file", s.log_file.empty() ? "\"\" (stderr)" : json_quote(s.log_file)},
      {"events_file", s.events_file.empty() ? "\"\" (none)" : json_quote(s.events_file)},
      {"max_upload_replay", std::to_string(s.max_upload_replay)},
      {"max_error_body", std::to_string(s.max_error_body)},
      {"fleet.store", config::describe_fleet_store(s.fleet)},
      {"fleet.hold_new", s.fleet.hold_new ? "true" : "false"},
      {"fleet.budget.percent", std::to_string(s.fleet.budget.percent)},
      {"fleet.budget.window_ms", std::to_string(s.fleet.budget.window.count())},
      {"fleet.budget.reserve", std::to_string(s.fleet.budget.reserve)},
      {"fleet.dir", s.fleet.dir.empty() ? "\"\" (default)" : json_quote(s.fleet.dir)},
  };
}

std::string describe_fleet(const config::FleetSettings& f) {
  if (f.store == config::FleetStore::off) return "off (every process retries on its own)";
  std::string store = f.store == config::FleetStore::machine ? "machine store" : "Redis " + f.redis_url;
  return store + "; retries within " + std::to_string(f.budget.percent) + "% of requests per " +
         std::to_string(f.budget.window.count()) + " ms + " + std::to_string(f.budget.reserve) +
         (f.hold_new ? "; new requests wait out a cooldown" : "; new requests do not wait");
}

std::string describe_match(const config::Match& m) {
  std::string out;
  auto add = [&out](const char* what, const std::string& value) {
    if (value.empty()) return;
    out += (out.empty() ? "" : ", ") + std::string(what) + " " + value;
  };
  add("host", m.host);
  add("path", m.path);
  add("method", m.method);
  return out.empty() ? "every request" : out;
}

}  // namespace curlretry::cli
