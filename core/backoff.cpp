#include "core/backoff.h"

#include <algorithm>
#include <limits>

namespace curlretry::core {
namespace {

using Rep = Millis::rep;
constexpr Rep kRepMax = std::numeric_limits<Rep>::max();

// base·2^(n-1), or `cap` as soon as it would exceed it. Checked before shifting so that
// attempt numbers up to INT_MAX (unlimited retries) never overflow.
Rep exponential(Rep base, int n, Rep cap) {
  const int shift = n - 1;
  if (shift >= 63 || base > (cap >> shift)) return cap;
  return base << shift;
}

// base·n(n+1)/2, or `cap`. n(n+1)/2 fits in 64 bits for any int n, the product may not.
Rep triangular(Rep base, int n, Rep cap) {
  const Rep wide = n;
  const Rep steps = wide * (wide + 1) / 2;
  if (base > cap / steps) return cap;
  return base * steps;
}

// floor(u·span) in [0, span): a stub or a broken generator may hand us values outside [0, 1).
Rep scaled(double u, Rep span) {
  if (span <= 0 || !(u > 0.0)) return 0;
  const double v = u * static_cast<double>(span);
  if (v >= static_cast<double>(span)) return span - 1;
  return std::min(static_cast<Rep>(v), span - 1);
}

Rep saturating_triple(Rep v) { return v > kRepMax / 3 ? kRepMax : v * 3; }

}  // namespace

Millis backoff_delay(const Backoff& backoff, int failed_attempt, Millis previous, Random& random) {
  const Rep base = backoff.base.count();
  const Rep cap = std::max<Rep>(backoff.max.count(), 0);
  // A zero base is how users ask for immediate retries (BILI_REPLAY_RETRY_BASE_MS=0), whatever the
  // jitter or a previous server-imposed wait.
  if (base <= 0) return Millis{0};
  const int n = std::max(failed_attempt, 1);

  if (backoff.jitter == Jitter::decorrelated) {
    // AWS "decorrelated jitter": grows from the previous delay rather than from n, so the
    // strategy's own sequence does not apply.
    const Rep prev = std::max(previous.count(), base);
    const Rep span = saturating_triple(prev) - base;
    return Millis{std::min(cap, base + scaled(random.uniform(), span))};
  }

  Rep delay = 0;
  switch (backoff.strategy) {
    case Strategy::exponential: delay = exponential(base, n, cap); break;
    case Strategy::triangular: delay = triangular(base, n, cap); break;
    case Strategy::constant: delay = std::min(base, cap); break;
  }

  switch (backoff.jitter) {
    case Jitter::full: return Millis{scaled(random.uniform(), delay)};
    case Jitter::equal: {
      const Rep half = delay / 2;
      return Millis{half + scaled(random.uniform(), delay - half)};
    }
    case Jitter::none:
    case Jitter::decorrelated: break;
  }
  return Millis{delay};
}

Millis backoff_schedule_bound(const Backoff& backoff, int max_attempts) {
  if (max_attempts < 0) return Millis::max();
  const Rep base = backoff.base.count();
  const Rep cap = std::max<Rep>(backoff.max.count(), 0);
  if (base <= 0) return Millis{0};
  Rep total = 0;
  for (int n = 1; n < max_attempts; ++n) {
    Rep delay = cap;  // decorrelated jitter may reach the cap at any step
    if (backoff.jitter != Jitter::decorrelated) {
      switch (backoff.strategy) {
        case Strategy::exponential: delay = exponential(base, n, cap); break;
        case Strategy::triangular: delay = triangular(base, n, cap); break;
        case Strategy::constant: delay = std::min(base, cap); break;
      }
    }
    if (delay >= kRepMax - total) return Millis::max();
    total += delay;
    if (delay == cap) {  // every later wait is the cap too: no need to walk INT_MAX attempts
      const Rep rest = max_attempts - 1 - n;
      if (cap > 0 && rest > (kRepMax - total) / cap) return Millis::max();
      return Millis{total + cap * rest};
    }
  }
  return Millis{total};
}

}  // namespace curlretry::core
