// Log lines and attempt-log events: method, host and path only (no userinfo, no query), what
// happened, the decision.
#include <string>

#include "core/count_text.h"
#include "core/duration_text.h"
#include "shim/events.h"
#include "shim/log.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {
namespace {

using config::LogLevel;

}  // namespace

std::string Transfer::attempts_label() const {
  return core::counted(run_.attempt, "attempt", "attempts");
}

void Transfer::log_retry(const core::Verdict& verdict) const {
  if (!log::enabled(LogLevel::info)) return;
  std::string max = run_.policy->max_attempts < 0 ? "unlimited" : std::to_string(run_.policy->max_attempts);
  // A wait the server asked for says so: it is not curlretry's backoff.
  const std::string why = verdict.server_wait_header.empty() ? "" : " (" + verdict.server_wait_header + ")";
  log::write(LogLevel::info, run_.method + " " + run_.display + " -> " + verdict.what + ": retrying in " +
                                 core::human_duration(verdict.delay) + why + " (attempt " +
                                 std::to_string(run_.attempt) + "/" + max + ")");
}

void Transfer::record_event(const core::Verdict& verdict, CURLcode code) const {
  if (!events::enabled()) return;
  curl_off_t bytes = 0;
  long response_code = 0;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    getinfo(easy_, CURLINFO_SIZE_DOWNLOAD_T, &bytes);
    getinfo(easy_, CURLINFO_RESPONSE_CODE, &response_code);
  }
  events::Event e;
  e.method = run_.method;
  e.host = run_.host;
  e.path = run_.path;
  e.attempt = run_.attempt;
  e.status = status_seen(attempt_.response.status, response_code);
  e.outcome = verdict.what;
  e.retry = verdict.action == core::Action::retry;
  e.success = !e.retry && code == CURLE_OK && core::is_final_success(e.status);
  e.reason = verdict.reason;
  e.reason_detail = verdict.reason_detail;
  e.delay_ms = verdict.delay.count();
  e.bytes = static_cast<long long>(bytes);
  e.rule = run_.rule_name;
  e.fallback = run_.fallback.label();
  events::record(e);
}

void Transfer::log_final(const core::Verdict& verdict, int) const {
  // A first attempt that ends the transfer is what the host would have seen anyway: debug (-v)
  // only, unless curlretry itself chose not to retry something it otherwise would have. Any
  // other give-up is a failure the host now sees: warn, so CURLRETRY_LOG=warn means "quiet
  // unless it failed".
  using core::Reason;
  const Reason reason = verdict.reason;
  const bool success = reason == Reason::success || reason == Reason::committed;
  // A limit of curlretry's own that stopped a retry says so even on a first attempt.
  const bool declined = reason == Reason::retry_after_too_long || reason == Reason::not_replayable ||
                        reason == Reason::deadline || reason == Reason::max_elapsed || reason == Reason::budget ||
                        reason == Reason::cooldown;
  const bool quiet = run_.attempt == 1 && !declined;
  const LogLevel level = quiet ? LogLevel::debug : success ? LogLevel::info : LogLevel::warn;
  if (!log::enabled(level)) return;
  std::string line = run_.method + " " + run_.display + " -> " + verdict.what;
  if (success) {
    line += " after " + attempts_label();
  } else {
    // The server's value, the cap and the key that sets it: what to change if the wait is fine.
    if (reason == Reason::retry_after_too_long) {
      line += " (server asked for " + core::human_duration(verdict.server_wait) + " > retry_after.max_ms " +
              core::human_duration(run_.policy->max_retry_after) + ")";
    }
    line += ": giving up after " + attempts_label() + " (" + core::reason_text(verdict) + ")";
  }
  log::write(level, line);
}

}  // namespace curlretry::shim
