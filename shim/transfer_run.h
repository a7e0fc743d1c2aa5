// What one transfer (curl_easy_perform, or one add-to-done of a multi) knows across its
// attempts: its limits and clock, the request as matched against the config, the uploaded data
// kept for a retry, the cookies before the first attempt, and the counts that span attempts.
// begin() starts from a fresh value (built in place of the old one, as Attempt is).
#pragma once

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
  // noexcept for the in-place renewal (see Attempt): every member only sets fields.
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
  // The policy with max_attempts 1, when the proxy retried it (shim/proxy_layer.h). Optional: a
  // Policy's seven vectors would otherwise be built and destroyed by every begin() (issue 27).
  std::optional<core::Policy> single_attempt;

  core::Heartbeat heartbeat;
  std::string wait_cause;  // "529 overloaded", for the heartbeat lines
  FallbackState fallback;
  bool auth_tried = false;  // the credential command ran for this transfer
  std::string auth_what;    // "POST host/path -> HTTP 401", for the refresh's log line

  UploadReplay upload;
  CookieSnapshot cookies;  // the cookie engine's state before the first attempt
};

}  // namespace curlretry::shim
