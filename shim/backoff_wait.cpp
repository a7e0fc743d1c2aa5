#include "shim/backoff_wait.h"

#include <algorithm>
#include <thread>

namespace curlretry::shim {

namespace {

constexpr auto kSlice = std::chrono::milliseconds(100);

// Sleeps until `until` in slices of at most kSlice, the host's progress callback after each.
// False when it asked to abort.
bool sleep_until(Transfer& transfer, Clock::time_point until) {
  for (auto now = Clock::now(); now < until; now = Clock::now()) {
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kSlice));
    if (!transfer.host_progress_continue()) return false;
  }
  return true;
}

}  // namespace

bool wait_backoff(Transfer& transfer, core::Millis delay) {
  const auto until = Clock::now() + delay;
  for (;;) {
    auto now = Clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kSlice));
    transfer.heartbeat(Clock::now());
    if (!transfer.host_progress_continue()) return false;
  }
}

WaitEnd wait_between_attempts(Transfer& transfer, between_attempts::PendingRetry& retry, Transfer::Step& done) {
  using Kind = between_attempts::Look::Kind;
  // Bounded: every wait the driver asks for ends at a due time it set, and the fleet's waits add
  // up to at most retry_after.max_ms and backoff.max_ms (persistent mode: the host's deadline).
  for (;;) {
    const between_attempts::Look look = between_attempts::look(transfer, retry, Clock::now());
    if (look.kind == Kind::go) return WaitEnd::go;
    if (look.kind == Kind::done) {
      done = look.step;
      return WaitEnd::done;
    }
    if (!sleep_until(transfer, look.until)) return WaitEnd::aborted;
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
