// What one transfer (curl_easy_perform, or one add-to-done of a multi) knows across its
// attempts: its limits and clock, the request as matched against the config, the uploaded data
// kept for a retry, the cookies before the first attempt, and the counts that span attempts.
// begin() starts from a fresh value (restart(), as Attempt's).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "core/fleet_verdict.h"
#include "core/heartbeat.h"
#include "core/policy.h"
#include "core/random.h"
#include "shim/clock.h"
#include "shim/cookie_snapshot.h"
#include "shim/fallback.h"
#include "shim/upload_replay.h"

namespace curlretry::shim {

struct TransferRun {
  TransferRun() noexcept = default;

  int attempt = 0;  // the attempt under way, from 1; 0 while the first one is held back
  Clock::time_point started;
  std::optional<Clock::time_point> deadline;  // the program's CURLOPT_TIMEOUT(_MS) for the whole transfer
  core::Millis previous_delay{0};
  core::SplitMix random{0};
  bool last_transport_error = false;
  core::fleet_verdict::Waited fleet_waited;  // waited beyond the decided delay, for the fleet
  std::string retry_what;                    // the verdict's "what" of the attempt being retried, for a later give-up

  // The request, matched against the config on first need (Transfer::resolve_request()).
  const core::Policy* policy = nullptr;
  const config::Rule* rule = nullptr;  // nullptr: the defaults
  std::string rule_name;
  std::string method;
  std::string display;
  std::string host;  // for the attempt log
  std::string path;
  // The policy with max_attempts 1, when the proxy retried it (shim/proxy_layer.h). Made only
  // then: a Policy's seven vectors would otherwise be built and destroyed by every begin()
  // (issue 27), and held inline its 272 bytes sit in every handle of every host.
  std::unique_ptr<core::Policy> single_attempt;

  core::Heartbeat heartbeat;
  std::string wait_cause;  // "529 overloaded", for the heartbeat lines
  FallbackState fallback;
  bool auth_tried = false;  // the credential command ran for this transfer
  std::string auth_what;    // "POST host/path -> HTTP 401", for the refresh's log line

  UploadReplay upload;
  CookieSnapshot cookies;  // the cookie engine's state before the first attempt

  // Every member back to its initial value, in place (see Attempt::restart()): the strings
  // emptied with their storage kept, no temporary. A new member is reset here too: the size
  // check below fails until it is.
  [[gnu::always_inline]] void restart() noexcept {
    attempt = 0;
    started = Clock::time_point{};
    deadline.reset();
    previous_delay = core::Millis{0};
    random = core::SplitMix{0};
    last_transport_error = false;
    fleet_waited = core::fleet_verdict::Waited{};
    retry_what.clear();
    policy = nullptr;
    rule = nullptr;
    rule_name.clear();
    method.clear();
    display.clear();
    host.clear();
    path.clear();
    single_attempt.reset();
    heartbeat = core::Heartbeat{};
    wait_cause.clear();
    fallback.reset();
    auth_tried = false;
    auth_what.clear();
    upload.start();
    cookies.clear();
  }
};
#if defined(__x86_64__) && defined(__GLIBCXX__) && !defined(_GLIBCXX_DEBUG)
static_assert(sizeof(TransferRun) == 568, "a new member of TransferRun: reset it in TransferRun::restart(), then update the size");
#endif

}  // namespace curlretry::shim
