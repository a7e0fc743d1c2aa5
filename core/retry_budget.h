// The fleet budget's settings and a key's request and retry counts over a sliding window (the
// window's requests set the token bucket's cap, core/retry_tokens.h; both show in `curlretry
// fleet`). The window is a ring of fixed-width slots, each one 64-bit word (slot epoch, requests,
// retries), so that a store can keep it in shared memory and update it with one compare-and-swap.
// No clock, no memory: callers pass both.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>

#include "core/outcome.h"

namespace curlretry::core::budget {

struct Budget {
  int percent = 10;           // tokens earned per 100 successful transfers; caps the bank per 100 requests
  Millis window{10000};       // the window the cap counts requests over and the reserve trickles over
  int reserve = 10;           // tokens trickling in per window; the least the bank may hold
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

struct Counts {
  std::uint64_t requests = 0;
  std::uint64_t retries = 0;
};

// How many slots `window` covers (rounded up, at least one, at most kSlots).
int slots_in(Millis window);

// Sums the ring's slots whose epoch lies within the window ending at `now_epoch` (inclusive).
// `ring` is a snapshot of kSlots words indexed by ring_index().
Counts window_counts(std::span<const std::uint64_t> ring, std::uint32_t now_epoch, Millis window);

}  // namespace curlretry::core::budget
