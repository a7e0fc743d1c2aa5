// The fleet's retry budget as arithmetic: retries to a key stay within a percentage of that key's
// requests over a sliding window, or a small reserve when that is more; a retry that succeeds
// gives its unit back, so only retries that failed again stay charged. The window is a ring of fixed-width
// slots, each one 64-bit word (slot epoch, requests, retries), so that a store can keep it in
// shared memory and update it with one compare-and-swap. No clock, no memory: callers pass both.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>

#include "core/outcome.h"

namespace curlretry::core::budget {

struct Budget {
  int percent = 10;           // retries allowed per 100 requests in the window
  Millis window{10000};       // the sliding window
  int reserve = 10;           // retries per window allowed when the percentage allows fewer
};

// The ring's geometry is fixed (a store file shared by processes with different configs must
// agree on it): 500 ms slots, 128 of them, so a window may span up to 64 s.
inline constexpr Millis kSlotWidth{500};
inline constexpr int kSlots = 128;
inline constexpr Millis kMinWindow{kSlotWidth};
inline constexpr Millis kMaxWindow{kSlotWidth * kSlots};

struct Slot {
  std::uint32_t epoch = 0;     // which kSlotWidth interval since the Unix epoch (mod 2^32)
  std::uint16_t requests = 0;  // first attempts begun in it (saturating)
  std::uint16_t retries = 0;   // retries begun in it (saturating)
};

std::uint64_t pack(Slot slot);
Slot unpack(std::uint64_t word);

// The slot interval of a wall-clock instant in milliseconds since the Unix epoch.
std::uint32_t epoch_of(std::int64_t unix_ms);
// Where epoch `e` lives in the ring.
inline int ring_index(std::uint32_t e) { return static_cast<int>(e % kSlots); }

// The word after counting one request (or one retry) in interval `epoch`: a word left by an
// older interval starts over from zero. Counts saturate instead of wrapping.
std::uint64_t bump(std::uint64_t word, std::uint32_t epoch, bool retry);
// The word after giving back one retry counted in interval `epoch`: unchanged when the slot has
// moved on to a later interval (the count is already forgotten) or holds no retry.
std::uint64_t refund(std::uint64_t word, std::uint32_t epoch);

struct Counts {
  std::uint64_t requests = 0;
  std::uint64_t retries = 0;
};

// How many slots `window` covers (rounded up, at least one, at most kSlots).
int slots_in(Millis window);

// Sums the ring's slots whose epoch lies within the window ending at `now_epoch` (inclusive).
// `ring` is a snapshot of kSlots words indexed by ring_index().
Counts window_counts(std::span<const std::uint64_t> ring, std::uint32_t now_epoch, Millis window);

// Retries allowed in the window: percent of requests (rounded down), or the reserve when that is
// more. Not their sum: at fleet scale the percentage alone then bounds an outage's load, and the
// reserve only matters where the percentage gives too little (a lone process, a quiet key).
std::uint64_t allowance(const Budget& budget, const Counts& counts);
// Whether one more retry fits.
bool retry_allowed(const Budget& budget, const Counts& counts);

}  // namespace curlretry::core::budget
