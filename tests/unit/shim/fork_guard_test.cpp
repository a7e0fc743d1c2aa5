// The fork guard (shim/fork_guard.cpp): a registered lock held by one thread makes fork() in
// another wait for it, so the child never inherits it taken; registration from many threads at
// once loses none; a registration beyond the guard's room says so.
#include "shim/fork_guard.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

// Under TSan, a forked child that _exit()s reports the parent's other threads as leaked; here
// they are the point of the test (scripts/test-sanitizers.sh counts every report as a failure).
extern "C" const char* __tsan_default_options() { return "report_thread_leaks=0"; }

using curlretry::shim::fork_guarded_locks;
using curlretry::shim::guard_across_fork;

namespace {

// Forks while `held` is taken by another thread for `hold`; returns whether the parent's fork
// came back only after the release, and whether the child could take the lock.
void fork_while_held(std::mutex& held, bool* waited, bool* child_could_lock) {
  std::mutex m;
  std::condition_variable cv;
  bool taken = false;
  std::atomic<bool> released{false};
  std::thread holder([&] {
    std::lock_guard hold(held);
    {
      std::lock_guard lock(m);
      taken = true;
    }
    cv.notify_one();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the length of the hold, not a sync
    released = true;
  });
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return taken; });
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(held.try_lock() ? 0 : 1);
  *waited = released.load();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  *child_could_lock = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  holder.join();
}

}  // namespace

TEST(ForkGuard, ARegisteredLockHeldByAnotherThreadIsReleasedInTheChild) {
  static std::mutex lock;
  guard_across_fork(lock);
  bool waited = false, child_could_lock = false;
  fork_while_held(lock, &waited, &child_could_lock);
  EXPECT_TRUE(waited) << "fork() returned while another thread held the lock";
  EXPECT_TRUE(child_could_lock) << "the child inherited the lock taken";
}

TEST(ForkGuard, RegistrationsFromManyThreadsAtOnceAreAllKept) {
  constexpr int kThreads = 10;
  static std::mutex locks[kThreads];
  int before = fork_guarded_locks();
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      }
      guard_across_fork(locks[i]);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fork_guarded_locks(), before + kThreads);
  // Each of them is held across fork.
  for (int i = 0; i < kThreads; i += 3) {
    bool waited = false, child_could_lock = false;
    fork_while_held(locks[i], &waited, &child_could_lock);
    EXPECT_TRUE(waited) << "lock " << i;
    EXPECT_TRUE(child_could_lock) << "lock " << i;
  }
}

TEST(ForkGuardDeathTest, ARegistrationBeyondTheRoomIsReported) {
  EXPECT_EXIT(
      {
        static std::mutex many[40];
        for (auto& m : many) guard_across_fork(m);
        _exit(0);
      },
      ::testing::ExitedWithCode(0), "more locks than the fork guard holds");
}
