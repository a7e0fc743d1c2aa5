// "Still waiting" lines for long waits between attempts: a retry that waits minutes (unattended
// mode, long Retry-After) must not look like a hang. Pure: the clock comes in as arguments, so
// a three-hour wait is tested in microseconds.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/outcome.h"

namespace curlretry::core {

class Heartbeat {
 public:
  using Time = std::chrono::steady_clock::time_point;

  // A wait of `wait` from `wait_start`: a line is due at wait_start + k*period (k >= 1) while
  // that is before the wait's end. A wait no longer than the period gets none; period 0 = off.
  void arm(Time wait_start, Millis wait, Millis period);
  void disarm() { next_.reset(); }
  // When the next line is due; nullopt when none is left in this wait.
  std::optional<Time> next() const { return next_; }
  // True when a line is due at `now`; then moves on to the next period after `now` (a caller
  // that woke late says it once, not once per missed period).
  bool due(Time now);
  Time wait_end() const { return end_; }

 private:
  std::optional<Time> next_;
  Time start_{};
  Time end_{};
  Millis period_{0};
};

// "4m10s", "12m30s", "3h00m00s", "45s", "2.5s".
std::string format_duration(Millis d);

// "529 overloaded" for a usual transient status, "400 captcha (risk-control)" for another one (the
// verdict's `what` without "HTTP "), and `what` as it is for a transport error ("connection reset").
std::string heartbeat_cause(int status, bool transport_ok, std::string_view what);

// "still waiting for POST api.anthropic.com/v1/messages (529 overloaded, attempt 14, 12m30s so
// far, next try in 4m10s)".
std::string heartbeat_line(std::string_view request, std::string_view cause, int attempt, Millis so_far,
                           Millis next_try);

}  // namespace curlretry::core
