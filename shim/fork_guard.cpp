#include "shim/fork_guard.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <atomic>

namespace curlretry::shim {
namespace {

// Room for every process-wide lock of the library (seven today) and then some; no allocation,
// so the handlers are safe in any state.
constexpr int kMaxLocks = 16;
std::array<std::atomic<std::mutex*>, kMaxLocks> g_locks{};
// Slots handed out: each registration reserves its own (fetch_add), then publishes its pointer.
std::atomic<int> g_reserved{0};
std::atomic<bool> g_overflow_told{false};
// What the prepare handler took, so that both sides release exactly that (a lock published in
// between is not released by mistake). glibc runs one fork's handlers at a time.
std::array<std::mutex*, kMaxLocks> g_held{};
int g_held_count = 0;

int registered() {
  int n = g_reserved.load(std::memory_order_acquire);
  return n < kMaxLocks ? n : kMaxLocks;
}

// Takes every registered lock without assuming an order among them (the library's code paths
// may nest two locks either way): the first blocking, the others tried, and on a miss all are
// released and the one that was busy is waited for first. The std::lock algorithm.
void lock_all() {
  int n = 0;
  for (int i = 0, reserved = registered(); i < reserved; ++i) {
    // A slot reserved but not yet published belongs to a lock nobody has used yet.
    if (std::mutex* m = g_locks[i].load(std::memory_order_acquire)) g_held[n++] = m;
  }
  g_held_count = n;
  if (n == 0) return;
  int first = 0;
  for (;;) {
    g_held[first]->lock();
    int busy = -1;
    for (int i = 0; i < n && busy < 0; ++i) {
      if (i != first && !g_held[i]->try_lock()) busy = i;
    }
    if (busy < 0) return;
    for (int i = 0; i < busy; ++i) {
      if (i != first) g_held[i]->unlock();
    }
    g_held[first]->unlock();
    first = busy;
    sched_yield();
  }
}

void unlock_all() {
  for (int i = g_held_count - 1; i >= 0; --i) g_held[i]->unlock();
  g_held_count = 0;
}

}  // namespace

void guard_across_fork(std::mutex& mutex) {
  static const bool handlers = [] { return pthread_atfork(lock_all, unlock_all, unlock_all) == 0; }();
  (void)handlers;
  int slot = g_reserved.fetch_add(1, std::memory_order_acq_rel);
  if (slot < kMaxLocks) {
    g_locks[slot].store(&mutex, std::memory_order_release);
    return;
  }
  // Never dropped in silence: a lock left out could stay held forever in a forked child.
  if (!g_overflow_told.exchange(true)) {
    static const char kMessage[] = "curlretry: internal error: more locks than the fork guard holds; a child forked "
                                   "while one is taken may hang\n";
    ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    (void)ignored;
  }
}

int fork_guarded_locks() { return registered(); }

}  // namespace curlretry::shim
