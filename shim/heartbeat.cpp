// Transfer's "still waiting" lines: a wait between attempts longer than settings.heartbeat_ms
// says so once per period, from the step between attempts (shim/between_attempts.cpp), which the
// easy loop sleeps through and the multi heap parks (the multi host is never blocked for it).
#include "shim/header_lookup.h"
#include "shim/log.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {

void Transfer::arm_heartbeat(const core::Verdict& verdict) {
  const long long period = runtime_->config.settings.heartbeat_ms;
  run_.heartbeat.arm(Clock::now(), verdict.delay, core::Millis{period});
  if (!run_.heartbeat.next()) return;
  const int status = status_seen(*api_, easy_, attempt_.response.status);
  run_.wait_cause = core::heartbeat_cause(status, !run_.last_transport_error, verdict.what);
}

void Transfer::heartbeat(Clock::time_point now) {
  if (!run_.heartbeat.due(now) || !log::enabled(config::LogLevel::info)) return;
  const auto so_far = std::chrono::duration_cast<core::Millis>(now - run_.started);
  const auto next_try = std::chrono::duration_cast<core::Millis>(run_.heartbeat.wait_end() - now);
  log::write(config::LogLevel::info,
             core::heartbeat_line(run_.method + " " + run_.display, run_.wait_cause, run_.attempt, so_far, next_try));
}

}  // namespace curlretry::shim
