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
  int percent = 10;      // tokens earned per 100 successful transfers; caps the bank per 100 requests
  Millis window{10000};  // the window the cap counts requests over and the reserve trickles over
  int reserve = 10;      // tokens trickling in per window; the least the bank may hold
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

// Inline, as epoch_of() and bump(): every request of the fleet store counts through them (issue 27).
inline std::uint64_t pack(Slot slot) {
  return (static_cast<std::uint64_t>(slot.epoch) << 32) | (static_cast<std::uint64_t>(slot.requests) << 16) |
         slot.retries;
}
inline Slot unpack(std::uint64_t word) {
  return Slot{static_cast<std::uint32_t>(word >> 32), static_cast<std::uint16_t>((word >> 16) & 0xffff),
              static_cast<std::uint16_t>(word & 0xffff)};
}

// The slot interval of a wall-clock instant in milliseconds since the Unix epoch.
inline std::uint32_t epoch_of(std::int64_t unix_ms) {
  if (unix_ms < 0) unix_ms = 0;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(unix_ms / kSlotWidth.count()));
}
// Where epoch `e` lives in the ring.
inline int ring_index(std::uint32_t e) { return static_cast<int>(e % kSlots); }

// The word after counting one request (or one retry) in interval `epoch`: a word left by an
// older interval starts over from zero. Counts saturate instead of wrapping.
inline std::uint64_t bump(std::uint64_t word, std::uint32_t epoch, bool retry) {
  // On the packed word (pack()'s layout): no unpacking on the path every request takes.
  if (static_cast<std::uint32_t>(word >> 32) != epoch) word = static_cast<std::uint64_t>(epoch) << 32;
  const unsigned shift = retry ? 0 : 16;
  if (((word >> shift) & 0xffff) != 0xffff) word += std::uint64_t{1} << shift;
  return word;
}

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
