#include "core/retry_budget.h"

#include <algorithm>
#include <limits>

namespace curlretry::core::budget {

std::uint64_t pack(Slot slot) {
  return (static_cast<std::uint64_t>(slot.epoch) << 32) | (static_cast<std::uint64_t>(slot.requests) << 16) |
         slot.retries;
}

Slot unpack(std::uint64_t word) {
  return Slot{static_cast<std::uint32_t>(word >> 32), static_cast<std::uint16_t>((word >> 16) & 0xffff),
              static_cast<std::uint16_t>(word & 0xffff)};
}

std::uint32_t epoch_of(std::int64_t unix_ms) {
  if (unix_ms < 0) unix_ms = 0;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(unix_ms / kSlotWidth.count()));
}

std::uint64_t bump(std::uint64_t word, std::uint32_t epoch, bool retry) {
  Slot slot = unpack(word);
  if (slot.epoch != epoch) slot = Slot{epoch, 0, 0};
  constexpr auto kMax = std::numeric_limits<std::uint16_t>::max();
  std::uint16_t& count = retry ? slot.retries : slot.requests;
  if (count < kMax) ++count;
  return pack(slot);
}

int slots_in(Millis window) {
  const auto width = kSlotWidth.count();
  const auto n = (std::max<Millis::rep>(window.count(), 1) + width - 1) / width;
  return static_cast<int>(std::clamp<Millis::rep>(n, 1, kSlots));
}

Counts window_counts(std::span<const std::uint64_t> ring, std::uint32_t now_epoch, Millis window) {
  Counts counts;
  if (ring.size() != static_cast<std::size_t>(kSlots)) return counts;
  const auto span = static_cast<std::uint32_t>(slots_in(window));
  for (const std::uint64_t word : ring) {
    const Slot slot = unpack(word);
    // Modular age: a slot from the future (a clock that stepped back) or older than the window
    // is left out.
    const std::uint32_t age = now_epoch - slot.epoch;
    if (word == 0 || age >= span) continue;
    counts.requests += slot.requests;
    counts.retries += slot.retries;
  }
  return counts;
}

}  // namespace curlretry::core::budget
