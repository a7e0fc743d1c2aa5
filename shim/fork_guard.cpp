#include "shim/fork_guard.h"

#include <pthread.h>

#include <array>
#include <atomic>

namespace curlretry::shim {
namespace {

// A handful of process-wide locks; no allocation, so the handlers are safe in any state.
constexpr int kMaxLocks = 8;
std::array<std::atomic<std::mutex*>, kMaxLocks> g_locks{};
std::atomic<int> g_count{0};

void lock_all() {
  int n = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) g_locks[i].load(std::memory_order_acquire)->lock();
}

void unlock_all() {
  int n = g_count.load(std::memory_order_acquire);
  for (int i = n - 1; i >= 0; --i) g_locks[i].load(std::memory_order_acquire)->unlock();
}

}  // namespace

void guard_across_fork(std::mutex& mutex) {
  static const bool registered = [] { return pthread_atfork(lock_all, unlock_all, unlock_all) == 0; }();
  (void)registered;
  int slot = g_count.load(std::memory_order_acquire);
  if (slot >= kMaxLocks) return;
  g_locks[slot].store(&mutex, std::memory_order_release);
  g_count.store(slot + 1, std::memory_order_release);
}

}  // namespace curlretry::shim
