#include "cli/explain.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/config_load.h"
#include "cli/describe.h"
#include "cli/json.h"
#include "core/ascii.h"
#include "core/cooldown.h"
#include "core/fleet_key.h"
#include "core/fleet_probe.h"
#include "core/fleet_verdict.h"
#include "core/random.h"
#include "core/retry_tokens.h"
#include "core/settle.h"
#include "core/stream_events.h"
#include "core/url.h"
#include "fleet/location.h"
#include "fleet/store.h"

namespace curlretry::cli {
namespace {

using core::ascii::field_value;
using core::ascii::lower;
using core::ascii::upper;

// At most `limit` bytes of the body: the shim never looks further, and a big file must not be
// slurped whole.
bool read_body(const std::string& spec, std::size_t limit, std::string& body, std::string& error) {
  if (spec.empty() || spec.front() != '@') {
    body = spec.substr(0, limit);
    return true;
  }
  const std::string path = spec.substr(1);
  std::FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    error = "--body " + spec + ": cannot open " + path;
    return false;
  }
  body.assign(limit, '\0');
  const std::size_t n = limit == 0 ? 0 : std::fread(body.data(), 1, limit, file);
  const bool failed = std::ferror(file) != 0;
  if (file != stdin) std::fclose(file);
  if (failed) {
    error = "--body " + spec + ": read error";
    return false;
  }
  body.resize(n);
  return true;
}

bool is_event_stream(std::string_view content_type) {
  const std::string type = lower(field_value(content_type.substr(0, content_type.find(';'))));
  return type == "text/event-stream";
}

// What the shim's hold would make of a whole 2xx event stream: the deciding event goes into the
// outcome (an error before content) and into `e.stream` (said in words).
void explain_stream(const core::Policy& policy, Explanation& e) {
  core::Outcome& o = e.outcome;
  const core::StreamRules& rules = policy.stream;
  if (policy.max_attempts == 1 || !rules.hold) {
    e.stream = std::string("not held (") + (rules.hold ? "max_attempts is 1" : "stream.hold is false") +
               "): the first body byte commits";
    return;
  }
  const core::StreamScan scan = core::scan_stream(rules, o.body_prefix);
  const std::string at =
      "event " + std::to_string(scan.event) + " (" + scan.type + ") ending at byte " + std::to_string(scan.end);
  switch (scan.kind) {
    case core::StreamScan::Kind::content: e.stream = at + " is the first content event: it commits the stream"; break;
    case core::StreamScan::Kind::error:
      e.stream = at + " is an error before any content";
      o.stream_error = scan.data;
      o.stream_error_event = scan.type;
      break;
    case core::StreamScan::Kind::limit:
      e.stream = "no content or error event within stream.hold_max_bytes (" + std::to_string(scan.end) +
                 "): the stream is committed there";
      break;
    case core::StreamScan::Kind::end:
      e.stream = "only setup events (" + std::to_string(scan.end) +
                 " bytes): held until content, an error, or the end of the stream";
      break;
  }
  o.body_prefix = o.body_prefix.substr(0, policy.body_window);
}

// The response of the attempt as the options give it: transport, status, the headers' hints,
// the body (an event stream read as far as the hold would look).
bool read_response(const ExplainOptions& options, const core::Policy& policy, Explanation& e, std::string& error) {
  core::Outcome& o = e.outcome;
  std::optional<std::string> content_type;
  std::string transport = options.transport;
  for (char& c : transport) c = c == '-' ? '_' : c;  // "connect-refused" reads naturally too
  const auto kind = core::transport_from_string(lower(transport));
  if (!kind) {
    error = "--transport " + options.transport +
            ": unknown kind (expected ok, connect_refused, reset, send, recv, empty_reply, tls_handshake, "
            "http2_stream, timeout, host_abort, bad_argument or other)";
    return false;
  }
  o.transport = *kind;
  if (options.status != 0 && (options.status < 100 || options.status > 599)) {
    error = "--status " + std::to_string(options.status) + ": expected an HTTP status, 100..599";
    return false;
  }
  o.status = options.status;
  if (o.transport == core::Transport::ok && o.status == 0) {
    error = "say what the attempt produced: --status N and/or --transport KIND";
    return false;
  }

  for (const auto& header : options.headers) {
    const auto colon = header.find(':');
    if (colon == std::string::npos || field_value(std::string_view(header).substr(0, colon)).empty()) {
      error = "--header \"" + header + "\": expected 'Name: value'";
      return false;
    }
    const std::string_view name = field_value(std::string_view(header).substr(0, colon));
    const std::string_view value = std::string_view(header).substr(colon + 1);
    // The hints as the shim reads them (the first of a repeated one counts), then what only
    // explain reads: whether the body is an event stream.
    if (o.hints.take(name, value, o.status)) continue;
    if (core::ascii::iequals(name, "content-type") && !content_type) content_type = std::string(field_value(value));
  }

  // An event stream is read as far as the hold would look (one byte more shows the bound passed).
  const bool stream = o.status >= 200 && o.status < 300 && o.transport == core::Transport::ok && content_type &&
                      is_event_stream(*content_type) && options.body;
  const std::size_t limit =
      stream ? std::max(policy.body_window, policy.stream.hold_max_bytes + 1) : policy.body_window;
  if (options.body && !read_body(*options.body, limit, o.body_prefix, error)) return false;
  if (stream) explain_stream(policy, e);
  return true;
}

// Where the attempt stands: its number, the time spent, and whether it may be sent again.
bool read_attempt(const ExplainOptions& options, core::Outcome& o, std::string& error) {
  if (options.attempt < 1) {
    error = "--attempt " + std::to_string(options.attempt) + ": attempts count from 1";
    return false;
  }
  if (options.elapsed_ms < 0 || options.previous_delay_ms < 0) {
    error = "--elapsed-ms and --previous-delay-ms cannot be negative";
    return false;
  }
  o.attempt = options.attempt;
  o.elapsed = core::Millis{options.elapsed_ms};
  o.previous_delay = core::Millis{options.previous_delay_ms};
  o.committed = options.committed;
  o.replayable = !options.not_replayable;
  return true;
}

// What the next attempt switches to under the rule's `fallback:` (empty: nothing), when this
// retried attempt was an overload and at least `after` of them came in a row.
std::string fallback_of(const config::Rule* matched, const core::Outcome& o, const core::Verdict& verdict) {
  if (matched == nullptr || !matched->fallback.enabled() || verdict.action != core::Action::retry ||
      o.attempt < matched->fallback.after) {
    return {};
  }
  const config::Fallback& f = matched->fallback;
  bool overload = std::find(f.on_status.begin(), f.on_status.end(), o.status) != f.on_status.end();
  for (const auto& marker : f.on_markers) overload = overload || o.body_prefix.find(marker) != std::string::npos;
  if (!overload) return {};
  std::string out;
  if (!f.model.empty()) out = "model " + f.model;
  if (!f.url.empty()) {
    const auto base = core::split_url(f.url);
    const std::string shown = base ? base->host_path() : f.url;
    out += (out.empty() ? "" : "; ") + std::string("url ") + shown;
  }
  return out;
}

// The steps after decide (core/settle.h), in their order, as far as explain knows their facts:
// each is said only where it could change this verdict; what only the running transfer knows is
// said to be known only then. (The fleet's step is `fleet now:`, from this machine's store.)
void settle_steps(const config::Rule* matched, bool committed, Explanation& e) {
  const core::Outcome& o = e.outcome;
  core::Verdict& v = e.verdict;
  // 1. A response the policy could retry is held to its end: only a 2xx/3xx without a body
  // reaches the program at the end of its headers, and only a transport error then retries it.
  if (v.action == core::Action::retry && core::is_final_success(o.status) && o.transport != core::Transport::ok) {
    e.commit =
        "if the program already had this response's headers (one without a body, handed over at their "
        "end), it gives up (committed) instead: known only at run time";
  }
  // 3. The rule's credential command: whether it runs is known here, what it prints is not.
  const config::AuthRefresh* auth = matched && matched->auth.enabled() ? &matched->auth : nullptr;
  const bool refreshes = auth && std::find(auth->on.begin(), auth->on.end(), o.status) != auth->on.end();
  const bool asks = refreshes && core::settle::wants_credential(v, true, committed);
  if (asks) {
    e.credential = "rule " + matched->name + " refreshes " + auth->header + " on " + std::to_string(o.status) +
                   ": its command runs (once per transfer); a value it prints means retry at once (auth-refresh), "
                   "none means give up with this response: known only at run time";
  } else if (refreshes && v.action == core::Action::give_up && committed) {
    e.credential = "not refreshed: part of the response reached the program";
  }
  // 4. The upload goes again from its start: whether it can is known only when it is rewound.
  if (core::settle::wants_rewind(v) || asks) {
    e.upload =
        "the request's body, if any, is rewound before the retry; one that cannot be gives up (not-replayable): known "
        "only at run time";
  }
}

}  // namespace

std::optional<Explanation> explain(const config::Config& config, const ExplainOptions& options, std::string& error) {
  std::string why;
  const auto url = core::split_url(options.url, &why);
  if (!url) {
    error = "URL \"" + options.url + "\" " + why;
    return std::nullopt;
  }
  const std::string method = upper(options.method);

  // The same headers pick a rule by `match.header` (as the request's) and give the response's
  // hints below (Retry-After and friends).
  config::RequestHeaders request_headers;
  for (const auto& header : options.headers) {
    const auto colon = header.find(':');
    if (colon == std::string::npos) continue;  // reported below
    request_headers.emplace_back(lower(field_value(std::string_view(header).substr(0, colon))),
                                 std::string(field_value(std::string_view(header).substr(colon + 1))));
  }
  Explanation e;
  e.matched = config.match(method, url->host, url->path, &request_headers);
  e.rule = e.matched ? e.matched->name : "defaults";
  const core::Policy& policy = e.matched ? e.matched->policy : config.defaults;
  e.max_attempts = policy.max_attempts;

  if (!read_response(options, policy, e, error) || !read_attempt(options, e.outcome, error)) return std::nullopt;
  if (config.settings.disabled) {
    e.verdict.action = core::Action::give_up;
    e.verdict.reason = core::Reason::disabled;
    e.verdict.what = "curlretry is disabled (" + [&] {
      const auto s = config.settings_sources.find("disable");
      return s == config.settings_sources.end() ? std::string("settings.disable") : s->second;
    }() + ")";
    return e;
  }
  const auto now = std::chrono::system_clock::now();
  core::SplitMix random(static_cast<std::uint64_t>(now.time_since_epoch().count()) ^
                        (static_cast<std::uint64_t>(::getpid()) << 32));
  e.verdict = core::decide(policy, e.outcome, random, now);
  settle_steps(e.matched, options.committed, e);
  e.fallback = fallback_of(e.matched, e.outcome, e.verdict);
  return e;
}

namespace {

// What the fleet would do with this retry now, from this machine's store as it is (read only;
// nothing is taken): core::fleet_verdict over the key's cooldown and bucket. Empty when the
// store is off or nobody used it yet.
std::string fleet_now(const config::Config& config, const core::Policy& policy, const std::string& url,
                      core::Millis delay) {
  namespace fv = core::fleet_verdict;
  const config::FleetSettings& f = config.settings.fleet;
  if (f.store == config::FleetStore::off) return {};
  std::string error;
  auto store =
      fleet::Store::open_existing(fleet::store_dir(f.dir, [](const char* name) { return std::getenv(name); }), error);
  if (!store) return {};
  char buffer[256];
  const std::string key(buffer, core::fleet_key::authority_of(url, buffer, sizeof buffer));
  if (key.empty()) return {};
  const auto now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const fv::Limits limits = fv::limits_for(policy, config.settings.persistent, policy.max_elapsed);
  const core::Millis cooling = core::cooldown::remaining(store->cooling(key, now).until_ms, now);
  const fv::Gate planned = fv::plan(delay, cooling, limits);
  if (planned.kind != fv::Kind::go) return fv::describe(planned);
  // A key that fails outright: the retry waits for the fleet's probe (or would be it), no token.
  const std::uint64_t hash = core::fleet_key::hash(key);
  if (!core::budget::healthy(store->success_sent(hash), now) &&
      store->failing_outright(hash, now, core::fleet_probe::outage_age(limits.persistent))) {
    const core::fleet_probe::Claim claim = core::fleet_probe::claim(store->probe(hash), store->run(hash), now, delay);
    const fv::Gate at =
        fv::at_probe(core::Millis{0}, claim.go ? std::nullopt : std::optional<core::Millis>(claim.wait), {}, limits);
    if (fv::probe_stands(at, store->run(hash), now)) {
      return fv::describe(at) + " (the key fails outright in this machine's store)";
    }
  }
  std::uint64_t tokens = core::budget::cap(f.budget, 0);  // a key nobody used starts full
  for (const auto& k : store->list(now, f.budget)) {
    if (k.key == key) tokens = k.tokens;
  }
  const core::budget::Bucket bucket{static_cast<std::uint32_t>(tokens), 1};
  const fv::Gate at = fv::at_send(
      core::Millis{0}, fv::Bucket{tokens >= core::budget::kToken, core::budget::eta(bucket, f.budget, 0)}, {}, limits);
  return fv::describe(at) + (tokens >= core::budget::kToken ? " (a token is there" : " (no token now") +
         " in this machine's store)";
}

}  // namespace

int run_explain(const ExplainOptions& options) {
  const std::optional<config::Config> loaded = load_config_or_say_why(options.config);
  if (!loaded) return kExplainCannotDecide;
  std::string error;
  const auto e = explain(*loaded, options, error);
  if (!e) {
    std::cerr << "curlretry explain: " << error << '\n';
    return kExplainCannotDecide;
  }
  const bool retry = e->verdict.action == core::Action::retry;
  // Scripts can ask `if curlretry explain ...` whether curlretry would retry.
  const int status = retry ? kExplainRetry : kExplainNoRetry;
  if (options.json) {
    std::cout << "{\"verdict\":\"" << core::to_string(retry ? core::VerdictKind::retry : core::VerdictKind::give_up)
              << '"';
    if (retry) std::cout << ",\"delay_ms\":" << e->verdict.delay.count();
    std::cout << ",\"reason\":" << json_quote(core::reason_text(e->verdict)) << ",\"rule\":" << json_quote(e->rule)
              << ",\"what\":" << json_quote(e->verdict.what);
    if (!e->fallback.empty()) std::cout << ",\"fallback\":" << json_quote(e->fallback);
    if (!e->stream.empty()) std::cout << ",\"stream\":" << json_quote(e->stream);
    // The one step a script can act on; the run-time notes (commit, upload) are the text's.
    if (!e->credential.empty()) std::cout << ",\"credential\":" << json_quote(e->credential);
    std::cout << "}\n";
    return std::cout.good() ? status : kExplainCannotDecide;
  }
  const auto url = core::split_url(options.url);
  std::cout << "request:  " << upper(options.method) << ' ' << url->host_path() << '\n';
  std::cout << "config:   " << (loaded->file.empty() ? "built-in defaults" : loaded->file) << '\n';
  std::cout << "rule:     " << e->rule;
  if (e->matched) std::cout << " (" << describe_match(e->matched->match) << ")";
  std::cout << '\n';
  std::cout << "attempt:  " << e->outcome.attempt << " of "
            << (e->max_attempts < 0 ? std::string("unlimited") : std::to_string(e->max_attempts)) << '\n';
  if (!e->stream.empty()) std::cout << "stream:   " << e->stream << '\n';
  std::cout << "outcome:  " << e->verdict.what << '\n';
  std::cout << "fleet:    " << describe_fleet(loaded->settings.fleet) << '\n';
  if (retry) {
    std::cout << "verdict:  retry in " << e->verdict.delay.count() << " ms (" << core::reason_text(e->verdict) << ")\n";
    const core::Policy& policy = e->matched ? e->matched->policy : loaded->defaults;
    if (const std::string word = fleet_now(*loaded, policy, options.url, e->verdict.delay); !word.empty()) {
      std::cout << "fleet now: " << word << '\n';
    }
    if (!e->fallback.empty()) {
      std::cout << "fallback: the next attempt sends " << e->fallback << " (after " << e->outcome.attempt
                << " overloads in a row)\n";
    }
  } else if (e->verdict.reason == core::Reason::success) {
    std::cout << "verdict:  done (success)\n";
  } else {
    std::cout << "verdict:  give up (" << core::reason_text(e->verdict) << ")\n";
  }
  if (!e->commit.empty()) std::cout << "commit:   " << e->commit << '\n';
  if (!e->credential.empty()) std::cout << "credential: " << e->credential << '\n';
  if (!e->upload.empty()) std::cout << "upload:   " << e->upload << '\n';
  return std::cout.good() ? status : kExplainCannotDecide;
}

}  // namespace curlretry::cli
