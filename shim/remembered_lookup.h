// A lookup in a locked table that remembers its last answer per thread: good for as long as the
// table's epoch (bumped on every insert and erase under the lock) has not moved. Hosts make
// runs of calls on the same handle, so most lookups end at the first comparison.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace curlretry::shim {

template <typename Key, typename Value>
struct RememberedLookup {
  Key key{};
  Value value{};
  std::uint64_t epoch = 0;  // 0: nothing remembered (table epochs start at 1)
};

// The miss: out of line, so that the hit path of remembered_find builds no frame for the lock.
template <typename Key, typename Value, typename Find>
__attribute__((noinline)) Value remembered_miss(RememberedLookup<Key, Value>& last, std::uint64_t now,
                                                std::mutex& mutex, Key key, Find find) {
  std::lock_guard lock(mutex);
  Value value = find(key);
  last = RememberedLookup<Key, Value>{key, value, now};
  return value;
}

// `last`: the caller's thread_local memory; `find` runs under `mutex` on a miss.
template <typename Key, typename Value, typename Find>
inline Value remembered_find(RememberedLookup<Key, Value>& last, const std::atomic<std::uint64_t>& epoch,
                             std::mutex& mutex, Key key, Find find) {
  std::uint64_t now = epoch.load(std::memory_order_acquire);
  if (last.key == key && last.epoch == now) return last.value;
  return remembered_miss(last, now, mutex, key, find);
}

}  // namespace curlretry::shim
