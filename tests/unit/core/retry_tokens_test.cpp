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

}  // namespace
}  // namespace curlretry::core::budget
