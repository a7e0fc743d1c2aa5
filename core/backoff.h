// Delay before the next attempt, from the strategy alone (no server hints).
#pragma once

#include "core/policy.h"
#include "core/random.h"

namespace curlretry::core {

// `failed_attempt` is the 1-based attempt that just failed: exponential gives base·2^(n-1),
// triangular base·n(n+1)/2, constant base; all capped by backoff.max, then jittered.
// `previous` feeds decorrelated jitter (min(max, uniform(base, 3·previous))).
Millis backoff_delay(const Backoff& backoff, int failed_attempt, Millis previous, Random& random);

}  // namespace curlretry::core
