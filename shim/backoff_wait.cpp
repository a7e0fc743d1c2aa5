#include "shim/backoff_wait.h"

#include <algorithm>
#include <thread>

namespace curlretry::shim {

namespace {

// `wakeable`: each slice also asks whether another request's success ended the wait (the
// recovery wake, Transfer::wake_due).
bool wait_slices(Transfer& transfer, core::Millis delay, bool wakeable) {
  constexpr auto kSlice = std::chrono::milliseconds(100);
  const auto until = Clock::now() + delay;
  for (;;) {
    auto now = Clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kSlice));
    now = Clock::now();
    transfer.heartbeat(now);
    if (!transfer.host_progress_continue()) return false;
    if (wakeable && transfer.wake_due(std::chrono::duration_cast<core::Millis>(until - now))) return true;
  }
}

}  // namespace

bool wait_backoff(Transfer& transfer, core::Millis delay) { return wait_slices(transfer, delay, false); }

WaitEnd wait_before_retry(Transfer& transfer, core::Millis delay) {
  using core::fleet_verdict::Kind;
  // The backoff itself may end early on the key's recovery; the fleet's waits below do not.
  const bool wakeable = transfer.arm_wake();
  if (!wait_slices(transfer, delay, wakeable)) return WaitEnd::aborted;
  // Bounded: every look that does not end it waits at least 1 ms, and the fleet's waits add up
  // to at most retry_after.max_ms and backoff.max_ms (persistent mode: the host's deadline).
  for (;;) {
    const core::fleet_verdict::Gate gate = transfer.fleet_gate();
    if (gate.kind == Kind::go || gate.kind == Kind::give_up_cooldown) return WaitEnd::go;
    if (gate.kind == Kind::give_up_budget) return WaitEnd::budget;
    if (!wait_backoff(transfer, gate.wait)) return WaitEnd::aborted;
  }
}

CURLcode wait_for_unpause(Transfer& transfer, Transfer::Step step) {
  constexpr auto kSlice = std::chrono::milliseconds(10);
  constexpr int kSlicesPerProgressCall = 10;
  for (int slice = 1; step.paused; ++slice) {
    if (transfer.unpause_requested()) {
      step = transfer.resume_replay();
      continue;
    }
    if (auto deadline = transfer.deadline(); deadline && Clock::now() >= *deadline) return CURLE_OPERATION_TIMEDOUT;
    std::this_thread::sleep_for(kSlice);
    if (slice % kSlicesPerProgressCall == 0) {
      if (!transfer.replay_progress_continue()) return CURLE_ABORTED_BY_CALLBACK;
      // The program's curl_easy_pause(CONT) in its progress callback went on with the replay.
      step.paused = transfer.replay_paused();
      step.code = transfer.replay_code();
    }
  }
  return step.code;
}

}  // namespace curlretry::shim
