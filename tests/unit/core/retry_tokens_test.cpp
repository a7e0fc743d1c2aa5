#include "core/retry_tokens.h"

#include <gtest/gtest.h>

namespace curlretry::core::budget {
namespace {

using std::chrono::milliseconds;

constexpr std::int64_t kNow = 1'764'460'800'000;
const Budget kDefault{10, milliseconds(10000), 10};

Bucket filled(std::uint32_t milli, std::int64_t at = kNow) {
  return Bucket{milli, static_cast<std::uint32_t>(static_cast<std::uint64_t>(at)) | 1u};
}

TEST(RetryTokens, BucketPacksIntoOneWord) {
  const Bucket b{123456, 0xdeadbeef};
  EXPECT_EQ(unpack_bucket(pack(b)).milli, 123456u);
  EXPECT_EQ(unpack_bucket(pack(b)).stamp, 0xdeadbeefu);
  const Mark m{(std::uint64_t{1} << 48) - 1, 0xffff};
  EXPECT_EQ(unpack_mark(pack(m)).credited, m.credited);
  EXPECT_EQ(unpack_mark(pack(m)).streak, 0xffffu);
}

TEST(RetryTokens, CapIsThePercentOfTheWindowsRequestsOrTheReserve) {
  EXPECT_EQ(cap(kDefault, 0), 10 * kToken);
  EXPECT_EQ(cap(kDefault, 99), 10 * kToken);
  EXPECT_EQ(cap(kDefault, 109), 10'900u);
  EXPECT_EQ(cap(kDefault, 115), 11'500u);  // fixed point: 11.5 tokens
  EXPECT_EQ(cap(kDefault, 500), 50 * kToken);
  EXPECT_EQ(cap(Budget{-5, milliseconds(10000), -3}, 1000), 0u);
}

TEST(RetryTokens, ANewBucketStartsFull) {
  const Bucket b = refill(Bucket{}, kDefault, kNow, 0, 1);
  EXPECT_EQ(b.milli, 10 * kToken);
  EXPECT_NE(b.stamp, 0u);
  EXPECT_EQ(refill(Bucket{}, kDefault, kNow, 0, 500).milli, 50 * kToken);
}

TEST(RetryTokens, EachSuccessEarnsPercentOfAToken) {
  EXPECT_EQ(refill(filled(0), kDefault, kNow, 1, 500).milli, 100u);
  EXPECT_EQ(refill(filled(0), kDefault, kNow, 37, 500).milli, 3'700u);
  EXPECT_EQ(refill(filled(0), Budget{25, milliseconds(10000), 0}, kNow, 3, 500).milli, 750u);
  EXPECT_EQ(refill(filled(0), Budget{0, milliseconds(10000), 10}, kNow, 1000, 500).milli, 0u);
}

TEST(RetryTokens, TheReserveTricklesInPerWindow) {
  EXPECT_EQ(refill(filled(0), kDefault, kNow + 1000, 0, 0).milli, 1 * kToken);  // 10 per 10 s
  EXPECT_EQ(refill(filled(0), kDefault, kNow + 2500, 0, 0).milli, 2'500u);
  EXPECT_EQ(refill(filled(0), kDefault, kNow + 60000, 0, 0).milli, 10 * kToken);  // a window at most
  EXPECT_EQ(refill(filled(0), Budget{10, milliseconds(10000), 0}, kNow + 5000, 0, 500).milli, 0u);
}

TEST(RetryTokens, TimeTooShortForAThousandthStaysOnTheStamp) {
  // 1 token per 64 s: 64 ms per thousandth. Decisions every 10 ms must not lose the time.
  const Budget slow{10, milliseconds(64000), 1};
  Bucket b = filled(0);
  for (int i = 1; i <= 64; ++i) b = refill(b, slow, kNow + i * 10, 0, 0);
  EXPECT_EQ(b.milli, 10u);  // 640 ms
}

TEST(RetryTokens, AClockThatSteppedBackAddsNothing) {
  const Bucket b = refill(filled(500, kNow), kDefault, kNow - 5000, 0, 0);
  EXPECT_EQ(b.milli, 500u);
  // ... and the stamp moved to the new time: no windfall when the clock comes back.
  EXPECT_EQ(refill(b, kDefault, kNow - 4000, 0, 0).milli, 1'500u);
}

TEST(RetryTokens, TheBankIsCappedButInFlightTokensComeBackAboveIt) {
  EXPECT_EQ(refill(filled(9'900), kDefault, kNow + 5000, 1000, 500).milli, 50 * kToken);
  Bucket b = filled(10 * kToken);
  EXPECT_TRUE(take(b, 0));
  b = give_back(give_back(b));
  EXPECT_EQ(b.milli, 11 * kToken);                                // the refund itself is not clamped
  EXPECT_EQ(refill(b, kDefault, kNow, 0, 1).milli, 10 * kToken);  // the next decision clamps
}

TEST(RetryTokens, TakeDebitsOneTokenAndNeverGoesBelowZero) {
  Bucket b = filled(2'500);
  EXPECT_TRUE(take(b, 0));
  EXPECT_EQ(b.milli, 1'500u);
  EXPECT_TRUE(take(b, 0));
  EXPECT_EQ(b.milli, 500u);
  EXPECT_FALSE(take(b, 0));  // half a token is not a retry
  EXPECT_EQ(b.milli, 500u);
  Bucket empty = filled(0);
  EXPECT_FALSE(take(empty, 0));
  EXPECT_EQ(empty.milli, 0u);
}

TEST(RetryTokens, GiveBackSaturates) { EXPECT_EQ(give_back(Bucket{0xffffffffu, 1}).milli, 0xffffffffu); }

TEST(RetryTokens, ABusyKeyFailingOutrightKeepsItsReserveBack) {
  EXPECT_EQ(kept_back(kDefault, 500, kFailingStreak - 1, false), 0u);
  EXPECT_EQ(kept_back(kDefault, 500, kFailingStreak, false), 10 * kToken);
  EXPECT_EQ(kept_back(kDefault, 150, kFailingStreak, false), 5 * kToken);  // cap 15: 5 above the reserve
  EXPECT_EQ(kept_back(kDefault, 20, 100, true), 0u);  // a quiet key or lone process: its reserve is its to spend
  Bucket b = filled(11 * kToken);
  EXPECT_TRUE(take(b, 10 * kToken));
  EXPECT_FALSE(take(b, 10 * kToken));
  EXPECT_TRUE(take(b, 0));  // once a success is credited again
}

TEST(RetryTokens, ARetryOfAFailedRetryLeavesTheReserveToFreshFailures) {
  EXPECT_EQ(kept_back(kDefault, 500, 0, true), 10 * kToken);
  EXPECT_EQ(kept_back(kDefault, 500, 0, false), 0u);
  EXPECT_EQ(kept_back(kDefault, 5, 0, true), 0u);  // a lone process: every attempt its policy allows
}

TEST(RetryTokens, AdvanceCreditsEachSuccessOnce) {
  Mark m;
  EXPECT_EQ(advance(m, 5), 5u);
  EXPECT_EQ(m.streak, 0u);
  EXPECT_EQ(advance(m, 5), 0u);
  EXPECT_EQ(m.streak, 1u);
  EXPECT_EQ(advance(m, 3), 0u);  // read before a racing decision moved the mark: nothing new
  EXPECT_EQ(m.streak, 2u);
  EXPECT_EQ(m.credited, 5u);
  EXPECT_EQ(advance(m, 12), 7u);
  EXPECT_EQ(m.streak, 0u);
}

TEST(RetryTokens, AdvanceWrapsWithTheCounter) {
  Mark m{(std::uint64_t{1} << 48) - 2, 0};
  EXPECT_EQ(advance(m, (std::uint64_t{1} << 48) + 3), 5u);
}

TEST(RetryTokens, TheStreakSaturates) {
  Mark m{0, 0xfffe};
  advance(m, 0);
  advance(m, 0);
  EXPECT_EQ(m.streak, 0xffffu);
}

// The bench's timeline on one key, with the default budget: 50 requests a second, healthy for
// 10 s, then a total outage of 20 s. The bank entering the outage is the cap (50) and what an
// outage may spend is that bank minus what is kept back, plus the trickle: about 1.06x.
TEST(RetryTokens, ATotalOutageSpendsTheBankAndTheTrickleOnly) {
  Bucket b;
  Mark m;
  std::uint64_t successes = 0, retries = 0;
  for (int i = 0; i < 500; ++i) ++successes;  // the healthy window, credited at the first decision
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t now = kNow + 10000 + i * 20;
    const std::uint64_t fresh = advance(m, successes);
    b = refill(b, kDefault, now, fresh, 500);
    if (take(b, kept_back(kDefault, 500, m.streak, false))) ++retries;
  }
  EXPECT_LE(retries, 40u + 20u + 1u);  // bank above the reserve, 20 s of trickle
  EXPECT_GE(b.milli, 10 * kToken - kToken);
  // 1000 logical requests and their retries: within 1.1x.
  EXPECT_LE(1000 + retries, 1100u);
}

// The failing run: what tells a request sent into an outage from a fresh burst's first failures.
TEST(RetryTokens, AFirstFailureBeginsARun) {
  const FailingRun r = note_failure(FailingRun{}, 0, kNow);
  EXPECT_EQ(r.began, static_cast<std::uint32_t>(kNow) | 1u);
  EXPECT_EQ(r.last, r.began);
}

TEST(RetryTokens, FailuresInARowWithoutASuccessKeepTheRunsStart) {
  FailingRun r = note_failure(FailingRun{}, 0, kNow);
  for (int i = 1; i <= 10; ++i) r = note_failure(r, 0, kNow + i * 500);
  EXPECT_EQ(r.began, static_cast<std::uint32_t>(kNow) | 1u);
  EXPECT_EQ(r.last, static_cast<std::uint32_t>(kNow + 5000) | 1u);
}

TEST(RetryTokens, ASuccessSentSinceTheRunBeganEndsIt) {
  FailingRun r = note_failure(FailingRun{}, 0, kNow);
  r = note_failure(r, static_cast<std::uint32_t>(kNow + 100), kNow + 4000);
  EXPECT_EQ(r.began, static_cast<std::uint32_t>(kNow + 4000) | 1u);
  // A success sent before the run began (answered late) does not end it.
  FailingRun s = note_failure(FailingRun{}, 0, kNow);
  s = note_failure(s, static_cast<std::uint32_t>(kNow - 100), kNow + 1500);
  EXPECT_EQ(s.began, static_cast<std::uint32_t>(kNow) | 1u);
}

TEST(RetryTokens, AQuietGapEndsARun) {
  FailingRun r = note_failure(FailingRun{}, 0, kNow);
  r = note_failure(r, 0, kNow + kRunGap.count() + 10);
  EXPECT_EQ(r.began, static_cast<std::uint32_t>(kNow + kRunGap.count() + 10) | 1u);
  // Within the gap it goes on.
  FailingRun q = note_failure(FailingRun{}, 0, kNow);
  q = note_failure(q, 0, kNow + kRunGap.count() - 10);
  EXPECT_EQ(q.began, static_cast<std::uint32_t>(kNow) | 1u);
}

TEST(RetryTokens, ARequestSentIntoAnOutageMetIt) {
  FailingRun r = note_failure(FailingRun{}, 0, kNow);
  for (int i = 1; i <= 8; ++i) r = note_failure(r, 0, kNow + i * 500);
  EXPECT_TRUE(met_outage(r, kNow + kOutageAge.count() + 1));
  EXPECT_TRUE(met_outage(r, kNow + 3900));
  // Sent in the run's first seconds: one of the burst that began it.
  EXPECT_FALSE(met_outage(r, kNow + kOutageAge.count() - 1));
  EXPECT_FALSE(met_outage(r, kNow));
  EXPECT_FALSE(met_outage(FailingRun{}, kNow));
}

// 300 requests sent at once into a key that had just succeeded: their own failures begin a fresh
// run after each was sent, so none met an outage, and their retries go unpaced once the key
// answers again.
TEST(RetryTokens, AFreshBurstNeverMeetsTheOutageItBegins) {
  const std::uint32_t success = static_cast<std::uint32_t>(kNow - 50000);
  FailingRun r;
  for (int i = 0; i < 300; ++i) {
    const std::int64_t born = kNow + i * 3;
    r = note_failure(r, success, born + 20);
    EXPECT_FALSE(met_outage(r, born)) << i;
  }
  // A key recovered after the outage: a request sent then fails on its own, which begins a new
  // run (a success was sent since the old one began): not paced.
  FailingRun old = note_failure(FailingRun{}, 0, kNow - 20000);
  old = note_failure(old, 0, kNow - 1000);
  const FailingRun after = note_failure(old, static_cast<std::uint32_t>(kNow - 500), kNow + 10);
  EXPECT_FALSE(met_outage(after, kNow));
}

}  // namespace
}  // namespace curlretry::core::budget
