// The end of a retry's wait, where the fleet may hold it longer (a cooldown raised meanwhile, a
// budget token not there yet) and, only when no token can come within the request's own limits,
// turn it into a give-up with reason "budget" (core/fleet_verdict.h). And the recovery wake: a
// retry that met its key's outage ends its backoff at the first success to the key sent after
// its failed attempt (core/fleet_wake.h).
#include <algorithm>

#include "core/duration_text.h"
#include "core/fleet_verdict.h"
#include "shim/log.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim {

namespace fv = core::fleet_verdict;

fv::Gate Transfer::fleet_gate() {
  // The backoff is over (or was never begun: a held first attempt): no success ends the
  // fleet's own waits early.
  fleet_key_.parked_stamp = 0;
  if (runtime_ == nullptr || run_.policy == nullptr) return fv::Gate{};
  const auto now = Clock::now();
  core::Millis left = run_.policy->max_elapsed - std::chrono::duration_cast<core::Millis>(now - run_.started);
  if (run_.deadline) left = std::min(left, std::chrono::duration_cast<core::Millis>(*run_.deadline - now));
  // A woken retry spaces the fleet's probes as its whole backoff would have: the part the wake
  // cut short comes on top of the wait it did.
  const fleet_hook::GateFacts facts{
      &host,      run_.policy, left, run_.attempt + 1, run_.fleet_waited, run_.previous_delay + fleet_key_.woken_early,
      &fleet_key_, answer_cut()};
  const fv::Gate gate = fleet_hook::gate(*runtime_, facts);
  if (gate.kind == fv::Kind::wait_cooldown) run_.fleet_waited.cooldown += gate.wait;
  if (gate.kind == fv::Kind::wait_token) {
    // Said once per retry and kind of wait, when it starts: a wait the old budget would have refused.
    core::Millis& waited = gate.probe ? run_.fleet_waited.probe : run_.fleet_waited.token;
    if (waited.count() == 0 && log::enabled(config::LogLevel::info)) {
      const core::Millis eta = gate.eta ? *gate.eta : gate.wait;
      log::write(config::LogLevel::info,
                 run_.method + " " + run_.display +
                     (gate.probe ? ": waiting for the fleet's probe (the key fails outright; the next probe in about "
                                 : ": waiting for a fleet token (the fleet's retry budget; the next in about ") +
                     core::human_duration(eta) + ")");
    }
    waited += gate.wait;
  }
  if (gate.over_budget && log::enabled(config::LogLevel::info)) {
    log::write(config::LogLevel::info,
               run_.method + " " + run_.display +
                   ": goes without a fleet token (its answer was cut short when the retry was decided; a "
                   "give-up now would hand over a broken answer)");
  }
  // At debug only: to the user a probe is one more retry of their own, already announced with its
  // delay; "waiting for the fleet's probe" (above) is what changes what they see. A retry that goes
  // over budget is not the probe (fleet_hook does not mark it), so it is not called one.
  if (gate.kind == fv::Kind::go && gate.probe && !gate.over_budget && log::enabled(config::LogLevel::debug)) {
    log::write(config::LogLevel::debug,
               run_.method + " " + run_.display + ": goes as the fleet's probe (the key fails outright)");
  }
  return gate;
}

bool Transfer::arm_wake() {
  if (runtime_ == nullptr) return false;
  fleet_hook::note_parked(*runtime_, fleet_key_);
  return wakeable();
}

bool Transfer::wake_due(core::Millis left) {
  if (!wakeable() || runtime_ == nullptr || !fleet_hook::woken(*runtime_, fleet_key_)) return false;
  fleet_key_.parked_stamp = 0;
  fleet_key_.woken_early = std::max(left, core::Millis{0});
  // The woken backlog goes at the budget's pace (a token each, given back when it succeeds),
  // never as one burst on the recovered key — for as long as its own backoff would still have
  // lasted (fleet_hook::gate): the wake may make a retry earlier, never later or refused.
  fleet_key_.woken = true;
  if (log::enabled(config::LogLevel::info)) {
    log::write(config::LogLevel::info, run_.method + " " + run_.display +
                                           ": another request's success ended the wait (the key recovered; " +
                                           core::human_duration(fleet_key_.woken_early) + " early)");
  }
  return true;
}

Transfer::Step Transfer::give_up_for_budget(CURLcode code) {
  core::Verdict verdict;
  verdict.action = core::Action::give_up;
  verdict.reason = core::Reason::budget;
  verdict.what = run_.retry_what;
  log_final(verdict, attempt_.response.status);
  record_event(verdict, code);
  // The attempt's response is still held (nothing was reset since its end): it is the answer.
  attempt_.replay_code = code;
  enter(Phase::replaying);
  return resume_replay();
}

}  // namespace curlretry::shim
