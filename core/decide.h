// The one question every part of curlretry asks: this attempt produced X — retry, after how
// long, or give up? Pure: no I/O, no globals; time and randomness come in as arguments.
#pragma once

#include <chrono>
#include <string>

#include "core/outcome.h"
#include "core/policy.h"
#include "core/random.h"
#include "core/reason.h"

namespace curlretry::core {

enum class Action : std::uint8_t { retry, give_up };

struct Verdict {
  Action action = Action::give_up;
  Millis delay{0};  // meaningful when action == retry
  // Machine reason (core/reason.h), written "status:503", "marker:captcha", "permanent:daily
  // quota", "code:1302", "transport:reset", "stream-error:overloaded_error", "committed",
  // "exhausted", ...: `reason_detail` is what follows the colon for the reasons that have one.
  Reason reason = Reason::not_retryable;
  std::string reason_detail;
  // What happened, for a log line: "HTTP 400 captcha (risk-control)", "connection reset",
  // "HTTP 429 daily quota (permanent)". Never more of the body than the matched marker.
  std::string what;
  // The wait the server asked for (honoured, or refused as "retry-after-too-long"), and the
  // header that asked: "Retry-After" or "retry-after-ms". Empty header = no such wait.
  Millis server_wait{0};
  std::string server_wait_header;
};

// "status:503", "exhausted": the reason as the attempt log, log lines and `explain` write it.
inline std::string reason_text(const Verdict& verdict) { return reason_text(verdict.reason, verdict.reason_detail); }

// First match wins, in the order of DESIGN §3.3. `now` is wall-clock time, used only to turn a
// Retry-After HTTP-date into a delay.
Verdict decide(const Policy& policy, const Outcome& outcome, Random& random,
               std::chrono::system_clock::time_point now);

// Whether a response with this status and x-should-retry value could still be retried, so the
// shim must hold its body for classification instead of streaming it to the host. 2xx/3xx
// responses are never held (a 200 stream reaches the host at once).
bool may_retry_response(const Policy& policy, int status, const std::optional<std::string>& should_retry);

}  // namespace curlretry::core
