#include "shim/backoff_wait.h"

#include <algorithm>
#include <thread>

namespace curlretry::shim {

bool wait_backoff(Transfer& transfer, core::Millis delay) {
  constexpr auto kSlice = std::chrono::milliseconds(100);
  const auto until = Clock::now() + delay;
  for (;;) {
    auto now = Clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kSlice));
    transfer.heartbeat(Clock::now());
    if (!transfer.host_progress_continue()) return false;
  }
}

bool wait_before_retry(Transfer& transfer, core::Millis delay) {
  if (!wait_backoff(transfer, delay)) return false;
  for (core::Millis more = transfer.fleet_wait_more(); more.count() > 0; more = transfer.fleet_wait_more()) {
    if (!wait_backoff(transfer, more)) return false;
  }
  return true;
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
    if (slice % kSlicesPerProgressCall == 0 && !transfer.host_progress_continue()) return CURLE_ABORTED_BY_CALLBACK;
  }
  return step.code;
}

}  // namespace curlretry::shim
