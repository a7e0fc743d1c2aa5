// The monotonic clock of transfers and of the multi parking. steady_clock, unless a unit test of
// the state machine installed a source of its own, so that waits pass without sleeping.
#pragma once

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace curlretry::shim {

struct Clock {
  using base = std::chrono::steady_clock;
  using rep = base::rep;
  using period = base::period;
  using duration = base::duration;
  using time_point = base::time_point;
  static constexpr bool is_steady = true;
  using Source = time_point (*)();

  static time_point now() noexcept {
    const Source source = source_.load(std::memory_order_relaxed);
    return source == nullptr ? monotonic() : source();
  }
  // nullptr: steady_clock again.
  static void set_source(Source source) noexcept { source_.store(source, std::memory_order_relaxed); }

 private:
  // What libstdc++'s steady_clock::now() reads, without its out-of-line call: the clock is read
  // several times per transfer on the success path (issue 27). vDSO, no syscall.
  static time_point monotonic() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return time_point(std::chrono::duration_cast<duration>(std::chrono::seconds(ts.tv_sec) +
                                                           std::chrono::nanoseconds(ts.tv_nsec)));
  }
  static inline std::atomic<Source> source_{nullptr};
};

// Milliseconds since the epoch: the clock every process shares (the fleet store's stamps, on this
// machine and in Redis; the attempt log's times). CLOCK_REALTIME read directly: system_clock::now()
// is an out-of-line call into libstdc++, and the fleet reads this once per request (issue 27).
inline std::int64_t wall_ms() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace curlretry::shim
