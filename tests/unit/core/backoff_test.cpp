#include "core/backoff.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include "fixed_random.h"

namespace curlretry::core {
namespace {

using testing::FixedRandom;

Backoff make(Strategy strategy, long base, long max, Jitter jitter = Jitter::none) {
  return Backoff{strategy, Millis{base}, Millis{max}, jitter};
}

std::vector<long> sequence(const Backoff& b, int attempts) {
  FixedRandom random;
  std::vector<long> out;
  for (int n = 1; n <= attempts; ++n) out.push_back(static_cast<long>(backoff_delay(b, n, Millis{0}, random).count()));
  return out;
}

TEST(Backoff, BiliExponentialFrom1500Doubles) {
  EXPECT_EQ(sequence(make(Strategy::exponential, 1500, 60000), 7),
            (std::vector<long>{1500, 3000, 6000, 12000, 24000, 48000, 60000}));
}

TEST(Backoff, GlmTriangularBase20Max50) {
  EXPECT_EQ(sequence(make(Strategy::triangular, 20, 50), 3), (std::vector<long>{20, 50, 50}));
}

TEST(Backoff, TriangularUncappedFollowsTriangleNumbers) {
  EXPECT_EQ(sequence(make(Strategy::triangular, 10, 1000000), 5), (std::vector<long>{10, 30, 60, 100, 150}));
}

TEST(Backoff, ConstantIsBaseEveryTime) {
  EXPECT_EQ(sequence(make(Strategy::constant, 700, 60000), 4), (std::vector<long>{700, 700, 700, 700}));
}

TEST(Backoff, ConstantBaseAboveMaxIsCapped) {
  EXPECT_EQ(sequence(make(Strategy::constant, 5000, 2000), 2), (std::vector<long>{2000, 2000}));
}

TEST(Backoff, ExponentialCapsExactlyAtMax) {
  EXPECT_EQ(sequence(make(Strategy::exponential, 1000, 4000), 5), (std::vector<long>{1000, 2000, 4000, 4000, 4000}));
}

TEST(Backoff, ZeroBaseMeansNoDelayWhateverTheJitter) {
  FixedRandom random(0.5);
  for (auto jitter : {Jitter::none, Jitter::full, Jitter::equal, Jitter::decorrelated}) {
    EXPECT_EQ(backoff_delay(make(Strategy::exponential, 0, 60000, jitter), 4, Millis{9000}, random), Millis{0});
  }
}

TEST(Backoff, HugeAttemptNumbersSaturateAtMaxWithoutOverflow) {
  FixedRandom random;
  EXPECT_EQ(backoff_delay(make(Strategy::exponential, 1500, 60000), INT_MAX, Millis{0}, random), Millis{60000});
  EXPECT_EQ(backoff_delay(make(Strategy::exponential, 1500, 60000), 63, Millis{0}, random), Millis{60000});
  EXPECT_EQ(backoff_delay(make(Strategy::exponential, 1, LLONG_MAX), 64, Millis{0}, random), Millis{LLONG_MAX});
  EXPECT_EQ(backoff_delay(make(Strategy::triangular, 20, 50), INT_MAX, Millis{0}, random), Millis{50});
  EXPECT_EQ(backoff_delay(make(Strategy::triangular, LLONG_MAX / 2, LLONG_MAX), INT_MAX, Millis{0}, random),
            Millis{LLONG_MAX});
}

TEST(Backoff, ExponentialJustBelowOverflowIsExact) {
  FixedRandom random;
  // 2^62 is the largest power of two in int64: attempt 63 with base 1 is the last exact doubling.
  EXPECT_EQ(backoff_delay(make(Strategy::exponential, 1, LLONG_MAX), 63, Millis{0}, random), Millis{1LL << 62});
}

TEST(Backoff, AttemptBelowOneIsTreatedAsTheFirst) {
  FixedRandom random;
  EXPECT_EQ(backoff_delay(make(Strategy::exponential, 1500, 60000), 0, Millis{0}, random), Millis{1500});
  EXPECT_EQ(backoff_delay(make(Strategy::triangular, 20, 50), -5, Millis{0}, random), Millis{20});
}

TEST(Backoff, NoJitterDoesNotDrawRandomness) {
  FixedRandom random;
  backoff_delay(make(Strategy::exponential, 1500, 60000), 2, Millis{0}, random);
  EXPECT_EQ(random.calls(), 0);
}

TEST(BackoffJitter, FullSpansZeroToJustBelowTheDelay) {
  const Backoff b = make(Strategy::exponential, 1500, 60000, Jitter::full);
  FixedRandom low(0.0);
  FixedRandom high(0.999999);
  EXPECT_EQ(backoff_delay(b, 2, Millis{0}, low), Millis{0});
  EXPECT_EQ(backoff_delay(b, 2, Millis{0}, high), Millis{2999});
}

TEST(BackoffJitter, EqualSpansHalfToJustBelowTheDelay) {
  const Backoff b = make(Strategy::exponential, 1500, 60000, Jitter::equal);
  FixedRandom low(0.0);
  FixedRandom high(0.999999);
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, low), Millis{750});
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, high), Millis{1499});
}

TEST(BackoffJitter, EqualOnOddDelayStaysBelowTheDelay) {
  const Backoff b = make(Strategy::constant, 3, 60000, Jitter::equal);
  FixedRandom low(0.0);
  FixedRandom high(0.999999);
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, low), Millis{1});
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, high), Millis{2});
}

TEST(BackoffJitter, FullAppliesAfterTheCap) {
  const Backoff b = make(Strategy::exponential, 1500, 4000, Jitter::full);
  FixedRandom high(0.999999);
  EXPECT_EQ(backoff_delay(b, 10, Millis{0}, high), Millis{3999});
}

TEST(BackoffJitter, DecorrelatedFirstRetrySpansBaseToThreeBase) {
  const Backoff b = make(Strategy::exponential, 1000, 60000, Jitter::decorrelated);
  FixedRandom low(0.0);
  FixedRandom high(0.999999);
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, low), Millis{1000});
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, high), Millis{2999});
}

TEST(BackoffJitter, DecorrelatedGrowsFromThePreviousDelay) {
  const Backoff b = make(Strategy::exponential, 1000, 60000, Jitter::decorrelated);
  FixedRandom high(0.999999);
  FixedRandom half(0.5);
  // base + u·(3·prev − base) = 1000 + 0.999999·(15000 − 1000)
  EXPECT_EQ(backoff_delay(b, 2, Millis{5000}, high), Millis{14999});
  EXPECT_EQ(backoff_delay(b, 2, Millis{5000}, half), Millis{8000});
}

TEST(BackoffJitter, DecorrelatedIsCappedAtMax) {
  const Backoff b = make(Strategy::exponential, 1000, 6000, Jitter::decorrelated);
  FixedRandom high(0.999999);
  EXPECT_EQ(backoff_delay(b, 5, Millis{50000}, high), Millis{6000});
}

TEST(BackoffJitter, DecorrelatedWithHugePreviousDoesNotOverflow) {
  const Backoff b = make(Strategy::exponential, 1000, 60000, Jitter::decorrelated);
  FixedRandom high(0.999999);
  EXPECT_EQ(backoff_delay(b, 5, Millis{LLONG_MAX}, high), Millis{60000});
}

TEST(BackoffJitter, OutOfRangeRandomValuesAreClamped) {
  const Backoff b = make(Strategy::constant, 1000, 60000, Jitter::full);
  FixedRandom above(1.5);
  FixedRandom below(-0.5);
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, above), Millis{999});
  EXPECT_EQ(backoff_delay(b, 1, Millis{0}, below), Millis{0});
}

TEST(BackoffScheduleBound, SumsTheLargestWaitOfEveryRetry) {
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 1500, 60000), 3), Millis{1500 + 3000});
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 1500, 60000), 1), Millis{0});
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::triangular, 100, 60000), 4), Millis{100 + 300 + 600});
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::constant, 700, 60000, Jitter::full), 3), Millis{1400});
  // Capped waits: 1 + 2 + 4 + 5 + 5.
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 1000, 5000), 6), Millis{17000});
  // Decorrelated jitter may reach the cap at any step.
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 1000, 5000, Jitter::decorrelated), 3), Millis{10000});
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 0, 5000), 10), Millis{0});
}

TEST(BackoffScheduleBound, UnlimitedOrHugeSchedulesSaturate) {
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 1500, 60000), -1), Millis::max());
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 1500, 60000), INT_MAX),
            Millis{1500 + 3000 + 6000 + 12000 + 24000 + 48000} + Millis{60000} * (INT_MAX - 7));
  EXPECT_EQ(backoff_schedule_bound(make(Strategy::exponential, 1, LLONG_MAX / 2), INT_MAX), Millis::max());
}

}  // namespace
}  // namespace curlretry::core
