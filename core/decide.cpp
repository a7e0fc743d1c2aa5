#include "core/decide.h"

#include <algorithm>
#include <limits>

#include "core/ascii.h"
#include "core/backoff.h"
#include "core/body_scan.h"
#include "core/provider_errors.h"
#include "core/retry_after.h"
#include "core/stream_events.h"

namespace curlretry::core {
namespace {

using Rep = Millis::rep;

bool is_client_error(int status) { return status >= 400 && status < 500; }

template <typename T, typename U>
bool listed(const std::vector<T>& list, const U& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string_view phrase(Transport t) {
  switch (t) {
    case Transport::ok: return "";
    case Transport::connect_refused: return "connection refused";
    case Transport::reset: return "connection reset";
    case Transport::send: return "send error";
    case Transport::recv: return "receive error";
    case Transport::empty_reply: return "empty reply";
    case Transport::tls_handshake: return "TLS handshake failed";
    case Transport::http2_stream: return "HTTP/2 stream error";
    case Transport::timeout: return "timeout";
    case Transport::host_abort: return "aborted by the host";
    case Transport::bad_argument: return "bad argument";
    case Transport::other: return "transfer failed";
  }
  return "transfer failed";
}

// The bare facts of the attempt, before any body matching: "HTTP 503", "connection reset",
// "HTTP 200 then receive error".
std::string describe(const Outcome& o) {
  std::string what;
  if (o.status > 0) what = "HTTP " + std::to_string(o.status);
  if (o.transport != Transport::ok) {
    if (!what.empty()) what += " then ";
    what += phrase(o.transport);
  }
  if (what.empty()) what = "no response";
  return what;
}

struct Finding {
  Action action;
  Reason reason;
  std::string detail;  // the reason's
  std::string what;
};

// The clauses of DESIGN §3.3 that look at the response itself (everything after the limits).
// decide() also borrows `what` from here for verdicts made earlier, so that a log line for
// "exhausted" still says which marker the last attempt hit.
Finding classify(const Policy& policy, const Outcome& o) {
  std::string what = describe(o);
  // `why`: the reason's detail; `said`: what the log line adds to `what`.
  auto give_up = [&](Reason reason, std::string why = {}, std::string_view said = {}) {
    return Finding{Action::give_up, reason, std::move(why), what + std::string(said)};
  };
  auto retry = [&](Reason reason, std::string why = {}, std::string_view said = {}) {
    return Finding{Action::retry, reason, std::move(why), what + std::string(said)};
  };

  if (o.hints.should_retry) {
    if (ascii::iequals(*o.hints.should_retry, "false")) {
      return give_up(Reason::should_retry_false, {}, " (x-should-retry: false)");
    }
    if (ascii::iequals(*o.hints.should_retry, "true")) {
      return retry(Reason::should_retry_true, {}, " (x-should-retry: true)");
    }
  }

  if (o.stream_error) {
    StreamErrorFinding f = classify_stream_error(policy, o.stream_error_event, *o.stream_error);
    what += " + stream error " + f.name + f.detail;
    return Finding{f.retry ? Action::retry : Action::give_up, f.reason, std::move(f.reason_detail), what};
  }

  // Only an error response's body is an error message; a 2xx body cut by a transport error is
  // content, and "billing" in it means nothing.
  if (o.status >= 400) {
    const std::string_view body = std::string_view(o.body_prefix).substr(0, policy.body_window);
    for (const CodeTable& table : policy.codes) {
      const auto value = json_scalar_at(body, table.path);
      if (!value) continue;
      // The table's own spelling goes into the log, never body text beyond the match.
      if (listed(table.permanent, *value)) {
        return give_up(Reason::permanent_code, *value, " code " + *value + " (permanent)");
      }
      if (listed(table.retry, *value)) return retry(Reason::code, *value, " code " + *value);
    }
    if (auto known = google_status(body)) {
      std::string said = " status " + known->detail + known->qualifier;
      return Finding{known->retry ? Action::retry : Action::give_up, known->reason, std::move(known->detail),
                     what + said};
    }
    if (const auto marker = find_marker(body, policy.permanent_markers)) {
      return give_up(Reason::permanent, std::string(*marker), " " + std::string(*marker) + " (permanent)");
    }
    if (listed(policy.retry_status, o.status)) return retry(Reason::status, std::to_string(o.status));
    if (is_client_error(o.status)) {
      if (const auto marker = find_marker(body, policy.retry_markers)) {
        return retry(Reason::marker, std::string(*marker), " " + std::string(*marker) + " (risk-control)");
      }
    }
  }
  if (listed(policy.retry_transport, o.transport)) return retry(Reason::transport, std::string(to_string(o.transport)));
  return give_up(Reason::not_retryable);
}

// A POST that got no answer may still have been acted on: only a failure before the request
// could leave (no connection, no TLS session) is certainly harmless to repeat.
bool request_may_have_arrived(const Outcome& o) {
  if (o.status != 0) return false;
  switch (o.transport) {
    case Transport::connect_refused:
    case Transport::tls_handshake: return false;
    default: return true;
  }
}

// The wait the server asked for, if we honour it and can read it, and the header that said so.
std::optional<std::pair<Millis, const char*>> server_wait(const Policy& policy, const Outcome& o,
                                                          std::chrono::system_clock::time_point now) {
  if (!policy.honor_retry_after) return std::nullopt;
  if (o.hints.retry_after_ms) {
    if (auto ms = parse_retry_after_ms(*o.hints.retry_after_ms)) return std::make_pair(*ms, "retry-after-ms");
  }
  if (o.hints.retry_after) {
    if (auto ms = parse_retry_after(*o.hints.retry_after, now)) return std::make_pair(*ms, "Retry-After");
  }
  // Google says it in the body (google.rpc.RetryInfo), of an error response or an in-band error.
  const std::string_view body = o.stream_error    ? std::string_view(*o.stream_error)
                                : o.status >= 400 ? std::string_view(o.body_prefix).substr(0, policy.body_window)
                                                  : std::string_view{};
  if (auto ms = google_retry_delay(body)) return std::make_pair(*ms, "RetryInfo");
  return std::nullopt;
}

// elapsed + delay > limit, without forming a sum that could overflow (delays are never negative).
bool past_limit(Millis elapsed, Millis delay, Millis limit) {
  const Rep e = elapsed.count();
  const Rep d = std::max<Rep>(delay.count(), 0);
  if (e > std::numeric_limits<Rep>::max() - d) return true;
  return e + d > limit.count();
}

}  // namespace

Verdict decide(const Policy& policy, const Outcome& outcome, Random& random,
               std::chrono::system_clock::time_point now) {
  Finding finding = classify(policy, outcome);
  auto give_up = [&](Reason reason) {
    return Verdict{Action::give_up, Millis{0}, reason, {}, finding.what, Millis{0}, {}};
  };

  if (outcome.committed) return give_up(Reason::committed);
  if (outcome.transport == Transport::host_abort) return give_up(Reason::host_abort);
  if (outcome.transport == Transport::bad_argument) return give_up(Reason::bad_argument);
  if (outcome.transport == Transport::ok && is_final_success(outcome.status) && !outcome.stream_error) {
    return give_up(Reason::success);
  }
  if (!outcome.replayable) return give_up(Reason::not_replayable);
  if (policy.max_attempts != -1 && outcome.attempt >= policy.max_attempts) return give_up(Reason::exhausted);
  if (outcome.elapsed >= policy.max_elapsed) return give_up(Reason::max_elapsed);
  if (finding.action == Action::give_up) {
    return Verdict{Action::give_up, Millis{0}, finding.reason, std::move(finding.detail), std::move(finding.what),
                   Millis{0},       {}};
  }
  if (!policy.retry_unanswered_post && outcome.unsafe_method && request_may_have_arrived(outcome)) {
    return give_up(Reason::unanswered_post);
  }

  Millis delay{0};
  Millis asked{0};
  std::string asked_by;
  if (const auto wait = server_wait(policy, outcome, now)) {
    asked = wait->first;
    asked_by = wait->second;
    // The server knows its own recovery time better than any strategy, so its wait is not capped
    // by backoff.max; a wait we will not sit through means: deliver this response now.
    if (asked > policy.max_retry_after) {
      Verdict v = give_up(Reason::retry_after_too_long);
      v.server_wait = asked;
      v.server_wait_header = std::move(asked_by);
      return v;
    }
    delay = asked;
  } else {
    delay = backoff_delay(policy.backoff, outcome.attempt, outcome.previous_delay, random);
  }

  if (past_limit(outcome.elapsed, delay, policy.max_elapsed)) return give_up(Reason::max_elapsed);
  // Sleeping into the host's own timeout only turns a clear error into a timeout.
  if (outcome.remaining && delay >= *outcome.remaining) return give_up(Reason::deadline);
  return Verdict{Action::retry,           delay, finding.reason,     std::move(finding.detail),
                 std::move(finding.what), asked, std::move(asked_by)};
}

bool may_retry_response(const Policy& policy, int status, const std::optional<std::string>& should_retry) {
  // With a single attempt allowed nothing is ever retried; streaming at once keeps
  // max_attempts: 1 byte- and timing-identical to running without the shim.
  if (policy.max_attempts != -1 && policy.max_attempts <= 1) return false;
  // A 2xx/3xx is delivered as it arrives, even with x-should-retry: true (decide() calls it success).
  if (is_final_success(status)) return false;
  if (status >= 400) return true;
  return should_retry && ascii::iequals(*should_retry, "true");
}

}  // namespace curlretry::core
