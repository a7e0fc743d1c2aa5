#include "cli/describe.h"

#include "cli/json.h"
#include "core/count_text.h"

namespace curlretry::cli {
namespace {

std::string list_of_strings(const std::vector<std::string>& items) { return json_list(items, ", "); }

std::string millis(core::Millis ms) { return std::to_string(ms.count()); }

std::string codes(const std::vector<core::CodeTable>& tables) {
  std::string out = "[";
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    out += (i ? ", " : "");
    out += "{path: " + t.path + ", retry: " + list_of_strings(t.retry) +
           ", permanent: " + list_of_strings(t.permanent) + "}";
  }
  return out + "]";
}

}  // namespace

KeyValues describe_policy(const core::Policy& p) {
  std::string statuses = "[";
  for (std::size_t i = 0; i < p.retry_status.size(); ++i)
    statuses += (i ? ", " : "") + std::to_string(p.retry_status[i]);
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
      {"retry_on.unanswered_post", p.retry_unanswered_post ? "true" : "false"},
      {"never_retry.body_markers", list_of_strings(p.permanent_markers)},
      {"codes", codes(p.codes)},
      {"body_window", std::to_string(p.body_window)},
      {"stream.hold", p.stream.hold ? "true" : "false"},
      {"stream.hold_max_bytes", std::to_string(p.stream.hold_max_bytes)},
      {"stream.content_events", list_of_strings(p.stream.content_events)},
      {"stream.setup_events", list_of_strings(p.stream.setup_events)},
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
      {"persistent", s.persistent ? "true" : "false"},
      {"heartbeat_ms", std::to_string(s.heartbeat_ms) + (s.heartbeat_ms == 0 ? " (never)" : "")},
      {"fleet.store", config::describe_fleet_store(s.fleet)},
      {"fleet.hold_new", s.fleet.hold_new ? "true" : "false"},
      {"fleet.budget.percent", std::to_string(s.fleet.budget.percent)},
      {"fleet.budget.window_ms", std::to_string(s.fleet.budget.window.count())},
      {"fleet.budget.reserve", std::to_string(s.fleet.budget.reserve)},
      {"fleet.dir", s.fleet.dir.empty() ? "\"\" (default)" : json_quote(s.fleet.dir)},
  };
}

KeyValues describe_agent(const config::Rule& rule) {
  KeyValues out;
  if (const auto& f = rule.fallback; f.enabled()) {
    std::string on;
    for (const int status : f.on_status) on += (on.empty() ? "" : ", ") + std::to_string(status);
    for (const auto& marker : f.on_markers) on += (on.empty() ? "" : ", ") + json_quote(marker);
    std::string value = "{after: " + std::to_string(f.after) + ", on: [" + on + "]";
    if (!f.model.empty()) value += ", model: " + json_quote(f.model);
    if (!f.url.empty()) value += ", url: " + json_quote(f.url);
    out.emplace_back("fallback", value + "}");
  }
  if (const auto& a = rule.auth; a.enabled()) {
    std::string on;
    for (const int status : a.on) on += (on.empty() ? "" : ", ") + std::to_string(status);
    const std::size_t args = a.command.size() - 1;
    out.emplace_back("auth", "{on: [" + on + "], header: " + a.header + ", command: " + json_quote(a.command.front()) +
                                 " (" + core::counted(static_cast<long long>(args), "argument", "arguments") +
                                 "), timeout_ms: " + std::to_string(a.timeout_ms) + "}");
  }
  return out;
}

std::string describe_fleet(const config::FleetSettings& f) {
  if (f.store == config::FleetStore::off) return "off (every process retries on its own)";
  std::string store = f.store == config::FleetStore::machine ? "machine store" : "Redis " + f.redis_url;
  // The token bucket of core/retry_tokens.h in one line.
  // The rules of "delay, never deny" (config/REFERENCE.md, "Fleet"), then the bucket's numbers.
  return store + "; the fleet delays a retry, never denies one: it waits for a cooldown up to its retry_after.max_ms "
                 "(a longer one is not waited for), and the first success sent after a cooldown was raised ends it; "
                 "the budget paces only a host in an outage (no success sent in the last second): a retry takes a "
                 "token when it is sent (waiting for one at most backoff.max_ms, as long as one wait of its own "
                 "policy may last; in persistent mode as long as it takes), given back if it succeeds; each success "
                 "earns " +
         std::to_string(f.budget.percent) + "% of one, plus " + std::to_string(f.budget.reserve) + " per " +
         std::to_string(f.budget.window.count()) + " ms; at most " + std::to_string(f.budget.percent) +
         "% of the requests per window (at least " + std::to_string(f.budget.reserve) + ")" +
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
  for (const auto& h : m.headers) add("header", h.name + ": " + h.glob);
  return out.empty() ? "every request" : out;
}

}  // namespace curlretry::cli
