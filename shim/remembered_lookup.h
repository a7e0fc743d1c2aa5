// A lookup in a locked table that remembers its last answers per thread: each good for as long as
// the table's epoch (bumped on every insert and erase under the lock) has not moved. Hosts make
// runs of calls on the same handle, so most lookups end at the first comparison, and take no lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace curlretry::shim {

// The latest answer, and `Spare` earlier ones, each in the slot its key hashes to. None are needed
// where a thread uses one handle at a time (a multi handle); some where it runs several in turn
// (the easy handles of a multi loop: with the latest answer alone, a loop over 16 transfers took
// the table's lock on most handle switches; issue 27).
template <typename Key, typename Value, std::size_t Spare = 0>
struct RememberedLookup {
  static_assert((Spare & (Spare - 1)) == 0, "a power of two: the slot is the top bits of the hash");
  struct Slot {
    Key key{};
    Value value{};
    std::uint64_t epoch = 0;  // 0: nothing remembered (table epochs start at 1)
  };
  Slot latest;
  [[no_unique_address]] std::array<Slot, Spare> spare;

  static Slot& spare_for(RememberedLookup& self, Key key) {
    static_assert(Spare > 0);
    if constexpr (Spare == 1) {
      return self.spare[0];
    } else {
      // Fibonacci hashing: handles are heap blocks a few KiB apart, their low bits all alike.
      constexpr unsigned kShift = 64 - __builtin_ctzll(Spare);
      return self.spare[(reinterpret_cast<std::uintptr_t>(key) * 0x9E3779B97F4A7C15ULL) >> kShift];
    }
  }
};

// The miss: out of line, so that the hit path of remembered_find builds no frame for the lock.
template <typename Key, typename Value, std::size_t Spare, typename Find>
__attribute__((noinline)) Value remembered_miss(RememberedLookup<Key, Value, Spare>& last, std::uint64_t now,
                                                std::mutex& mutex, Key key, Find find) {
  using Lookup = RememberedLookup<Key, Value, Spare>;
  if constexpr (Spare > 0) {
    // The latest answer steps aside into its spare slot; the key's own may still be good.
    if (last.latest.epoch == now) Lookup::spare_for(last, last.latest.key) = last.latest;
    if (const auto& slot = Lookup::spare_for(last, key); slot.key == key && slot.epoch == now) {
      last.latest = slot;
      return slot.value;
    }
  }
  std::lock_guard lock(mutex);
  Value value = find(key);
  last.latest = {key, value, now};
  return value;
}

// `last`: the caller's thread_local memory; `find` runs under `mutex` on a miss.
template <typename Key, typename Value, std::size_t Spare, typename Find>
inline Value remembered_find(RememberedLookup<Key, Value, Spare>& last, const std::atomic<std::uint64_t>& epoch,
                             std::mutex& mutex, Key key, Find find) {
  std::uint64_t now = epoch.load(std::memory_order_acquire);
  if (last.latest.key == key && last.latest.epoch == now) return last.latest.value;
  return remembered_miss(last, now, mutex, key, find);
}

}  // namespace curlretry::shim
