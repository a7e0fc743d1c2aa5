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
    if (!transfer.host_progress_continue()) return false;
  }
}

}  // namespace curlretry::shim
