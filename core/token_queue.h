// Which of the retries waiting for a key's tokens takes one that is there (and, while the key
// fails outright, which takes the fleet's due probe, core/fleet_probe.h): fair waiting, one word
// a store keeps beside the bucket (shared memory or Redis) and updates with one compare-and-swap.
// Without it the token went to whoever looked first: with hundreds waiting, one could look in
// vain for 20 s while the tokens went to the others.
//
// The order is freshest first (the request whose first attempt was sent last), as a server that
// is backed up serves its newest requests first (Facebook's "adaptive LIFO", Fail at Scale, ACM
// Queue 2015): the freshest request has the most of its deadline left and is the likeliest to be
// a passing failure, while the oldest has failed for longest and is the closest to being given up
// by its own user. So that nobody starves while others retry, every kOpenTurn-th token goes to
// whoever looks first, whatever its age, and a waiter that stopped looking (its process ended, it
// gave up) holds nothing back after kWaiterFresh. No clock, no memory: callers pass both.
#pragma once

#include <cstdint>

#include "core/policy.h"

namespace curlretry::core::token_queue {

// The youngest request waiting for a token, and the grants' running count (mod 256).
struct Queue {
  std::uint32_t youngest = 0;  // Unix ms (mod 2^32) its first attempt was sent; 0 = none waits
  std::uint32_t seen = 0;      // Unix ms (mod 2^24) it last looked
  std::uint8_t grants = 0;     // tokens taken, mod 256
};

// A waiter looks again every 100 ms (core::fleet_verdict::kTokenPoll): one not seen for this long
// no longer waits.
inline constexpr Millis kWaiterFresh{250};
// One token in this many goes to whoever asks first: the older waiters' share.
inline constexpr unsigned kOpenTurn = 4;

std::uint64_t pack(Queue queue);
Queue unpack(std::uint64_t word);

// The stamp a request born at `born_ms` (Unix ms its first attempt was sent) waits under; never 0.
std::uint32_t stamp_of(std::int64_t born_ms);

// Whether a retry of the request born at `born` (stamp_of) leaves a token that is there to a
// younger request waiting for one.
bool yields(Queue queue, std::uint32_t born, std::int64_t now_ms);
// The queue after that retry found no token it may take: it waits, as the youngest if it is.
Queue note_waiting(Queue queue, std::uint32_t born, std::int64_t now_ms);
// The queue after that retry took a token: the next turn; the youngest no longer waits if it was it.
Queue note_taken(Queue queue, std::uint32_t born);

}  // namespace curlretry::core::token_queue
