// The fleet's retry budget as a token bucket per key (like gRPC's retryThrottling or Finagle's
// budget, but shared by the whole fleet): a retry takes one token; a retry that succeeds gives it
// back; every successful transfer earns percent/100 of a token, and `reserve` tokens trickle in
// per window, so a total outage earns nothing and the fleet sends ~1.0x plus what it had banked.
// The bank is capped at percent/100 of the key's requests in the last window (at least the
// reserve). Fixed point in thousandths of a token, in words a store keeps in shared memory and
// updates with one compare-and-swap. No clock, no memory: callers pass both.
#pragma once

#include <cstdint>
#include <optional>

#include "core/retry_budget.h"

namespace curlretry::core::budget {

inline constexpr std::uint64_t kToken = 1000;  // one retry, in the bucket's fixed point
// Decisions in a row with no success credited between them: the key is failing outright.
inline constexpr std::uint32_t kFailingStreak = 3;

struct Bucket {
  std::uint32_t milli = 0;  // tokens x kToken
  std::uint32_t stamp = 0;  // Unix ms (mod 2^32) of the last trickle; 0 = never filled
};

std::uint64_t pack(Bucket bucket);
Bucket unpack_bucket(std::uint64_t word);

// The most the bucket holds: percent/100 of the window's requests, at least the reserve (milli).
std::uint64_t cap(const Budget& budget, std::uint64_t window_requests);

// The bucket at `now_ms`: a bucket never filled starts full; `reserve` tokens per window trickle
// in for the time since its stamp (a clock that stepped back adds nothing); `successes` earn
// percent/100 each; the sum is clamped to the cap.
Bucket refill(Bucket bucket, const Budget& budget, std::int64_t now_ms, std::uint64_t successes,
              std::uint64_t window_requests);

// Tokens a busy key keeps back while it fails outright (`streak` >= kFailingStreak), and always
// from a retry of a retry that failed (`again`: the weakest sign of a passing failure): up to the
// reserve, never more than the cap above the reserve, so a lone process or quiet key (cap =
// reserve) keeps back nothing. The fleet comes out of an outage with credit in hand, and there
// the outage's last requests, failing once more, do not take it from the first fresh failures.
std::uint64_t kept_back(const Budget& budget, std::uint64_t window_requests, std::uint32_t streak, bool again);

// Takes one retry's token when the bucket holds at least one above `kept`. False: over budget.
bool take(Bucket& bucket, std::uint64_t kept);
// A retry that succeeded gives its token back (saturating; the next refill clamps to the cap).
Bucket give_back(Bucket bucket);

// How long until the trickle alone lets take() succeed on a bucket just refilled (and found short):
// the missing thousandths at `reserve` tokens per window, rounded up. 0 when a token is there now;
// nullopt when nothing trickles (reserve 0): only a success or a refund can bring one.
std::optional<Millis> eta(Bucket bucket, const Budget& budget, std::uint64_t kept);

// A key with a success sent within this time is not failing outright: the budget paces only a
// key in an outage (no success for this long), so a host that still answers some requests gets
// every retry its requests' own policies allow (a cooldown, the server's own word, still delays
// them). Short, so that an outage's retries are paced almost from its start: a retry waits at least
// its own backoff, and a Retry-After of a second already outlasts it.
inline constexpr Millis kHealthyWithin{1000};
// Whether a success sent at `sent_stamp` (Unix ms mod 2^32; 0 = never) is within kHealthyWithin of
// `now_ms`. A stamp ahead of now (a clock that stepped back) counts as recent.
bool healthy(std::uint32_t sent_stamp, std::int64_t now_ms);

// A key's current failing run, as a store keeps it in two words (Unix ms mod 2^32; 0 = never):
// when the run began and its latest failure. A failure after a success *sent* since the run began,
// or after kRunGap without one, begins a new run. Kept so that a request can tell whether it was
// sent into an outage already under way (met_outage) or is one of a fresh burst's first failures.
struct FailingRun {
  std::uint32_t began = 0;
  std::uint32_t last = 0;
};
inline constexpr Millis kRunGap{2000};
// The run after a failure answered at `now_ms`, the key's latest success having been sent at
// `success_sent` (0 = never). `gap`: how long the run may go quiet (kRunGap; longer while the
// fleet's probes space its failures, core::fleet_probe::run_gap).
FailingRun note_failure(FailingRun run, std::uint32_t success_sent, std::int64_t now_ms, Millis gap = kRunGap);
// A request sent this long into a failing run met an outage: its retries stay paced (a token each)
// for the rest of the request, even once the key is healthy again, so the outage's backlog goes
// out at the budget's pace instead of as one burst at recovery. Long enough that the concurrent
// first failures of a fresh burst (all sent before the first of them was answered, or within a
// backoff of it) never count: they go unpaced as soon as the key answers again.
inline constexpr Millis kOutageAge{3000};
// Whether a request whose first attempt was sent at `born_ms` met its key's outage, given the run
// as it is after the request's own first failure: its own failure, had the key succeeded since
// the run began, began a new run later than `born_ms`.
bool met_outage(FailingRun run, std::int64_t born_ms);

// Which successes a key's bucket has been credited with, and how many decisions in a row found
// none new: 48 bits of a running success count, 16 bits of streak.
struct Mark {
  std::uint64_t credited = 0;
  std::uint32_t streak = 0;
};
std::uint64_t pack(Mark mark);
Mark unpack_mark(std::uint64_t word);
// A decision sees the running count `earned`: returns the successes not credited yet (0 when
// `earned` is not ahead of the mark, e.g. read before a racing decision moved it) and moves the
// mark, resetting the streak when there were some and adding one to it when there were none.
std::uint64_t advance(Mark& mark, std::uint64_t earned);

}  // namespace curlretry::core::budget
