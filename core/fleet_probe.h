// The fleet's half-open probe (issue 23): while a key fails outright, its retries neither draw
// the bank nor the trickle (core/retry_tokens.h); one retry at a time, fleet-wide, goes as the
// probe, the others wait. A probe's success ends the outage (the key's success stamp, as any
// success), and the waiting retries and those parked in their backoff (core/fleet_wake.h) go at
// the budget's pace; a probe's failure pushes the next one out. As a circuit breaker's half-open
// state, shared by the fleet through one word of the key's store entry, claimed by CAS.
// Why: the trickle (reserve per window, 1 token/s by default) was what a long outage cost, ~60
// retries a minute for the whole fleet; probes spaced up to kMaxGap cost ~60/8 a minute while a
// recovery is still seen within kMaxGap (the drain target is 10 s). Pure: the store passes the
// word, the run and the clock (Unix ms mod 2^32, as the store's stamps).
#pragma once

#include <cstdint>

#include "core/outcome.h"
#include "core/retry_tokens.h"

namespace curlretry::core::fleet_probe {

// The spacing between probes grows from the claiming retry's own backoff, doubling, within
// these bounds. The cap is chosen by the drain target: a recovery is seen by the next probe, at
// most kMaxGap after it (plus a look), and the parked retries then drain at the budget's pace in
// about a second, within 10 s. The floor keeps a short backoff from probing faster than the
// trickle would have let retries go.
inline constexpr Millis kMinGap{1000};
inline constexpr Millis kMaxGap{8000};

// The key's probe word: when the next probe may go, and the spacing the last claim chose (ms).
// 0 = no probe yet.
struct Probe {
  std::uint32_t next_at = 0;
  std::uint32_t gap = 0;
};
std::uint64_t pack(Probe probe);
Probe unpack(std::uint64_t word);

// How old a failing run with no success must be for its key to fail outright, for a retry in
// unattended mode (`persistent`, which never gives up for the budget): younger than the default
// backoff (1.5 s), so that a fresh outage's first unattended retries are probed, one at a time,
// instead of drawing the bank's ten (bench/fleet.sh persistent: 50 processes in a 60 s outage
// sent 1.40x their requests with 3 s, 1.18x from 1 s). For it, a hold behind the probe is only
// a delay: it waits as long as the provider takes in any case. Every other retry keeps
// core::budget::kOutageAge (3 s): its program may give it up after a limit curlretry cannot see
// (a host that drops a transfer after 300 ms), and held ~1 s behind a probe its own earlier
// requests began, such a retry was lost where the bank sent it at once (test_multi_hosts, in a
// fresh-clone CI of a 1 s age for every retry: docs/DESIGN.md section 9).
inline constexpr Millis kUnattendedAge{1000};
inline Millis outage_age(bool persistent) { return persistent ? kUnattendedAge : budget::kOutageAge; }

// Whether the key fails outright: a failing run that has lasted `age` (outage_age) with no
// success sent since it began (`success_sent`: the key's latest success, 0 = never). A fresh
// burst's concurrent first failures (a younger run) are not an outage: their retries draw the
// bank, as before; nor is a key that answered any request since the run began.
bool outage(budget::FailingRun run, std::uint32_t success_sent, std::int64_t now_ms, Millis age);

// A retry at the end of its wait on a key in an outage, after `own_backoff` (its own policy's
// wait before it): it claims the probe (`go`; the word becomes `next`, stored by CAS on the word
// read) when the next probe is due, else waits `wait` until it is. A word left by an earlier run
// (claimed before `run` began) or one implausibly far ahead (a clock that stepped back) starts a
// new series from the retry's own backoff.
// `yields`: a younger request waits for the probe too (core::token_queue::yields, the queue the
// tokens go by): a due probe is left to it, and this retry looks again after one poll
// (core::fleet_verdict::kTokenPoll). The youngest waiter is the one likeliest to be a request
// whose retry would succeed (its first attempt met the outage's end, or a failure of its own),
// where the outage's own retries have each failed over and over; when the probe went to whoever
// looked first, such a request waited among dozens and gave up (budget) after its allowance, a
// request the fleet off saved. The queue's open turn (every kOpenTurn-th) keeps the older ones
// from starving.
struct Claim {
  bool go = false;
  Millis wait{0};  // !go: until the next probe may go
  Probe next;      // go: the word to store
};
Claim claim(Probe probe, budget::FailingRun run, std::int64_t now_ms, Millis own_backoff, bool yields = false);

// The probe failed, answered at `now_ms`: the next one goes no sooner than a whole spacing after
// it (a slow answer does not shorten the spacing).
Probe after_failure(Probe probe, std::int64_t now_ms);

// This machine's claim was refused by the fleet's word (Redis: another machine's probe is due in
// `wait`): the machine's next claim waits that long too, so that its retries follow the fleet's
// schedule and ask again when the fleet's next probe is due.
Probe defer(Probe probe, std::int64_t now_ms, Millis wait);

// How long the key's failing run may go without a failure and still be the same run
// (core::budget::note_failure's quiet gap): while probes space the run's failures, their spacing
// on top of core::budget::kRunGap, so that an outage waited out by probes stays one outage.
Millis run_gap(Probe probe, budget::FailingRun run);

}  // namespace curlretry::core::fleet_probe
