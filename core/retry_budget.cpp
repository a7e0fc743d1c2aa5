#include "core/retry_budget.h"

#include <algorithm>

namespace curlretry::core::budget {

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
