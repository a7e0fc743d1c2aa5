// Delay before the next attempt, from the strategy alone (no server hints).
#pragma once

#include "core/policy.h"
#include "core/random.h"

namespace curlretry::core {

// `failed_attempt` is the 1-based attempt that just failed: exponential gives base·2^(n-1),
// triangular base·n(n+1)/2, constant base; all capped by backoff.max, then jittered.
// `previous` feeds decorrelated jitter (min(max, uniform(base, 3·previous))).
Millis backoff_delay(const Backoff& backoff, int failed_attempt, Millis previous, Random& random);

// The longest the strategy's own waits may add up to over a request of `max_attempts` (every
// jitter at its largest; -1, unlimited: Millis::max()): when the request's last attempt would go
// at the latest, had every attempt failed. The fleet's probe may hold a retry that long
// (core/fleet_verdict.h): a recovery its own schedule would have met, the probe meets too.
Millis backoff_schedule_bound(const Backoff& backoff, int max_attempts);

}  // namespace curlretry::core
