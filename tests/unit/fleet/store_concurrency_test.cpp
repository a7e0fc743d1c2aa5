// Many writers at once: threads of one process and forked processes, all on one table. Counts
// must add up exactly and a cooldown must end at the latest deadline anyone set. (Listed for
// TSan with the other unit tests.)
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/fleet_key.h"
#include "core/retry_tokens.h"
#include "fleet/store.h"
#include "store_support.h"
#include "temp_dir.h"

namespace curlretry::fleet {
namespace {

using namespace std::chrono_literals;
using testing::kNow;
using testing::open_store;
using testing::TempDir;

TEST(StoreConcurrency, ThreadsCountExactly) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  constexpr int kThreads = 8, kEach = 4000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < kEach; ++i) {
        store->count("shared:443", i % 4 == 0, kNow);
        store->count("own" + std::to_string(t) + ":443", false, kNow);
        store->cool("shared:443", kNow + t * 1000 + i % 7, 503, kNow);
      }
    });
  }
  for (auto& th : threads) th.join();
  auto c = store->counts("shared:443", kNow, 10000ms);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->requests, static_cast<std::uint64_t>(kThreads * kEach * 3 / 4));
  EXPECT_EQ(c->retries, static_cast<std::uint64_t>(kThreads * kEach / 4));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(store->counts("own" + std::to_string(t) + ":443", kNow, 10000ms)->requests, kEach + 0u);
  }
  EXPECT_EQ(store->cooling("shared:443", kNow).until_ms, kNow + (kThreads - 1) * 1000 + 6);
}

std::uint64_t tokens_of(const Store& store, std::string_view key, const core::budget::Budget& budget) {
  for (const auto& v : store.list(kNow, budget)) {
    if (v.key == key) return v.tokens;
  }
  return ~std::uint64_t{0};
}

TEST(StoreConcurrency, TokensTakenAndGivenBackAddUpExactly) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const core::budget::Budget budget{0, 64000ms, 60000};  // 60000 tokens, none earned, no time passes
  const std::uint64_t hash = core::fleet_key::hash("shared:443");
  constexpr int kThreads = 8, kEach = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, &budget, hash] {
      // Every thread takes two tokens and gives one back (one of its retries succeeded).
      for (int i = 0; i < kEach; ++i) {
        EXPECT_EQ(store->take_retry(hash, "shared:443", budget, kNow), true);
        EXPECT_EQ(store->take_retry(hash, "shared:443", budget, kNow), true);
        store->refund(hash);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(tokens_of(*store, "shared:443", budget), (60000u - kThreads * kEach) * core::budget::kToken);
  EXPECT_EQ(store->counts("shared:443", kNow, 10000ms)->retries, 2u * kThreads * kEach);
}

TEST(StoreConcurrency, EverySuccessIsCreditedExactlyOnce) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const core::budget::Budget budget{100, 64000ms, 0};  // one token per success, capped at the requests
  const std::uint64_t hash = core::fleet_key::hash("shared:443");
  ASSERT_EQ(store->take_retry(hash, "shared:443", budget, kNow), false);  // empty: no requests yet
  constexpr int kThreads = 8, kEach = 2000;
  // The cap (all the requests) is never reached: every credit must show.
  for (int i = 0; i < kThreads * kEach; ++i) store->count(hash, "shared:443", false, kNow);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, &budget, hash, t] {
      for (int i = 0; i < kEach; ++i) {
        store->earn(hash, kNow);
        // Decisions racing with the earning: each credits what it finds, none twice.
        if (i % 100 == t) store->take_retry(hash, "shared:443", budget, kNow);
      }
    });
  }
  for (auto& th : threads) th.join();
  const std::uint64_t taken = store->counts("shared:443", kNow, 10000ms)->retries;
  EXPECT_EQ(tokens_of(*store, "shared:443", budget), (kThreads * kEach - taken) * core::budget::kToken);
}

TEST(StoreConcurrency, OfRetriesRacingForTheProbeExactlyOneGoes) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const std::uint64_t hash = core::fleet_key::hash("down:443");
  ASSERT_TRUE(store->count(hash, "down:443", false, kNow));
  store->note_failure(hash, kNow);
  constexpr int kThreads = 8, kEach = 500;
  std::atomic<int> went{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        if (auto c = store->claim_probe(hash, kNow + 3000 + i % 3, 1500ms); c && c->go) ++went;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(went.load(), 1);
}

TEST(StoreConcurrency, ThreadsClaimingTheSameNewKeyShareOneEntry) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store] {
      for (int k = 0; k < 50; ++k) store->count("k" + std::to_string(k) + ":1", false, kNow);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(store->list(kNow, core::budget::Budget{}).size(), 50u);
  for (int k = 0; k < 50; ++k) {
    EXPECT_EQ(store->counts("k" + std::to_string(k) + ":1", kNow, 10000ms)->requests, kThreads + 0u);
  }
}

TEST(StoreConcurrency, ForkedProcessesShareTheTable) {
  TempDir tmp;
  constexpr int kChildren = 6, kEach = 3000;
  // The parent maps the table before forking (children inherit the mapping) and a second group
  // opens it afresh in the child: both must land in the same table.
  auto store = open_store(tmp.store());
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::unique_ptr<Store> own;
      Store* s = store.get();
      if (c % 2 == 1) {
        std::string error;
        std::vector<std::string> notes;
        own = Store::open(tmp.store(), error, notes);
        if (!own) ::_exit(3);
        s = own.get();
      }
      for (int i = 0; i < kEach; ++i) {
        if (!s->count("fleet:443", false, kNow)) ::_exit(4);
      }
      s->cool("fleet:443", kNow + 1000 * (c + 1), 429, kNow);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  EXPECT_EQ(store->counts("fleet:443", kNow, 10000ms)->requests, static_cast<std::uint64_t>(kChildren * kEach));
  EXPECT_EQ(store->cooling("fleet:443", kNow).until_ms, kNow + 1000 * kChildren);
}

TEST(StoreConcurrency, ProcessesRacingToCreateTheTableAgreeOnOne) {
  TempDir tmp;
  constexpr int kChildren = 8;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string error;
      std::vector<std::string> notes;
      auto s = Store::open(tmp.store(), error, notes);
      if (!s) ::_exit(3);
      if (!notes.empty()) ::_exit(5);  // nothing was broken: nothing may be rebuilt
      s->count("race:1", false, kNow);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto store = open_store(tmp.store());
  EXPECT_EQ(store->counts("race:1", kNow, 10000ms)->requests, static_cast<std::uint64_t>(kChildren));
}

}  // namespace
}  // namespace curlretry::fleet
