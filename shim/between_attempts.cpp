#include "shim/between_attempts.h"

#include <algorithm>

#include "core/fleet_verdict.h"
#include "core/fleet_wake.h"

namespace curlretry::shim::between_attempts {

namespace fv = core::fleet_verdict;

PendingRetry start(Transfer& transfer, core::Millis delay, CURLcode code, Clock::time_point now) {
  // Armed before the first look: a wakeable retry is looked at every kLook.
  const bool wakeable = transfer.arm_wake();
  return PendingRetry{now + delay, code, wakeable};
}

Clock::time_point next_look(const Transfer& transfer, const PendingRetry& retry, Clock::time_point now) {
  Clock::time_point at = retry.due;
  if (auto beat = transfer.next_heartbeat(); beat && *beat < at) at = *beat;
  if (retry.wakeable) at = std::min(at, now + core::fleet_wake::kLook);
  return at;
}

namespace {

Look wait_until(Clock::time_point until) { return Look{Look::Kind::wait, until, {}}; }
Look done(const Transfer::Step& step) { return Look{Look::Kind::done, {}, step}; }

}  // namespace

Look look(Transfer& transfer, PendingRetry& retry, Clock::time_point now) {
  // (1) Still waiting, unless the key recovered meanwhile (the recovery wake: the retry then goes
  // through the steps below as at the end of its wait). Only the backoff may end early: the
  // waits below (credential, fleet) clear `wakeable`.
  if (retry.due > now) {
    const bool woken =
        retry.wakeable && transfer.wake_due(std::chrono::duration_cast<core::Millis>(retry.due - now));
    if (!woken) {
      transfer.heartbeat(now);
      return wait_until(next_look(transfer, retry, now));
    }
  }
  retry.wakeable = false;
  // (2) The credential command runs in the background; the host's loop (or progress callback)
  // goes on meanwhile.
  switch (transfer.poll_credential()) {
    case Transfer::CredentialProgress::running:
      // The program's own limit (CURLOPT_TIMEOUT) holds while the command runs: at it the
      // command is killed and the program gets the refused response, within its time.
      retry.due = now + kCredentialPoll;
      if (auto deadline = transfer.deadline(); deadline) {
        if (now >= *deadline) return done(transfer.refresh_outlasted_deadline(retry.last_code));
        retry.due = std::min(retry.due, *deadline);
      }
      return wait_until(retry.due);
    case Transfer::CredentialProgress::failed: return done(transfer.give_up_after_refresh(retry.last_code));
    case Transfer::CredentialProgress::none:
    case Transfer::CredentialProgress::ready: break;
  }
  // (3) The fleet's word at send: a cooldown raised meanwhile or no budget token yet waits again;
  // no token within the request's limits ends it with its response.
  const fv::Gate gate = transfer.fleet_gate();
  switch (gate.kind) {
    case fv::Kind::wait_cooldown:
    case fv::Kind::wait_token:
      retry.due = now + gate.wait;
      return wait_until(next_look(transfer, retry, now));
    case fv::Kind::give_up_budget: return done(transfer.give_up_for_budget(retry.last_code));
    case fv::Kind::go:
    case fv::Kind::give_up_cooldown: break;
  }
  return Look{};
}

}  // namespace curlretry::shim::between_attempts
