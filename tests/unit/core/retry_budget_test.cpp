#include <gtest/gtest.h>

#include <array>

#include "core/retry_budget.h"

namespace curlretry::core::budget {
namespace {

using std::chrono::milliseconds;

std::array<std::uint64_t, kSlots> empty_ring() { return {}; }

void count(std::array<std::uint64_t, kSlots>& ring, std::uint32_t epoch, bool retry, int times = 1) {
  for (int i = 0; i < times; ++i) ring[ring_index(epoch)] = bump(ring[ring_index(epoch)], epoch, retry);
}

TEST(RetryBudget, PackAndUnpackRoundTrip) {
  const Slot slot{0xdeadbeef, 1234, 65535};
  const Slot back = unpack(pack(slot));
  EXPECT_EQ(back.epoch, 0xdeadbeefu);
  EXPECT_EQ(back.requests, 1234);
  EXPECT_EQ(back.retries, 65535);
}

TEST(RetryBudget, EpochIsHalfSecondsSinceUnixEpoch) {
  EXPECT_EQ(epoch_of(0), 0u);
  EXPECT_EQ(epoch_of(499), 0u);
  EXPECT_EQ(epoch_of(500), 1u);
  EXPECT_EQ(epoch_of(1'764'460'800'123), 3'528'921'600u);
  EXPECT_EQ(epoch_of(-5), 0u);
}

TEST(RetryBudget, BumpCountsWithinTheSameInterval) {
  std::uint64_t w = bump(0, 7, false);
  w = bump(w, 7, false);
  w = bump(w, 7, true);
  EXPECT_EQ(unpack(w).epoch, 7u);
  EXPECT_EQ(unpack(w).requests, 2);
  EXPECT_EQ(unpack(w).retries, 1);
}

TEST(RetryBudget, BumpStartsOverInANewInterval) {
  std::uint64_t w = pack(Slot{7, 100, 50});
  w = bump(w, 7 + kSlots, true);
  EXPECT_EQ(unpack(w).epoch, 7u + kSlots);
  EXPECT_EQ(unpack(w).requests, 0);
  EXPECT_EQ(unpack(w).retries, 1);
}

TEST(RetryBudget, BumpSaturatesInsteadOfWrapping) {
  std::uint64_t w = pack(Slot{3, 65535, 65535});
  w = bump(bump(w, 3, true), 3, false);
  EXPECT_EQ(unpack(w).requests, 65535);
  EXPECT_EQ(unpack(w).retries, 65535);
}

TEST(RetryBudget, SlotsInWindowRoundUpAndClamp) {
  EXPECT_EQ(slots_in(milliseconds(10000)), 20);
  EXPECT_EQ(slots_in(milliseconds(10001)), 21);
  EXPECT_EQ(slots_in(milliseconds(1)), 1);
  EXPECT_EQ(slots_in(milliseconds(0)), 1);
  EXPECT_EQ(slots_in(milliseconds(10'000'000)), kSlots);
}

TEST(RetryBudget, WindowCountsOnlyRecentSlots) {
  auto ring = empty_ring();
  const std::uint32_t now = 1000;
  count(ring, now, false, 5);        // this interval
  count(ring, now - 19, false, 3);   // the oldest interval of a 10 s window
  count(ring, now - 20, false, 100); // just outside it
  count(ring, now - 3, true, 2);
  Counts c = window_counts(ring, now, milliseconds(10000));
  EXPECT_EQ(c.requests, 8u);
  EXPECT_EQ(c.retries, 2u);
}

TEST(RetryBudget, SlotsFromTheFutureAreLeftOut) {
  auto ring = empty_ring();
  count(ring, 1001, false, 9);  // a clock that stepped back
  EXPECT_EQ(window_counts(ring, 1000, milliseconds(10000)).requests, 0u);
}

TEST(RetryBudget, ARingOfTheWrongSizeCountsNothing) {
  std::array<std::uint64_t, 3> small{pack(Slot{5, 9, 9}), 0, 0};
  EXPECT_EQ(window_counts(small, 5, milliseconds(10000)).requests, 0u);
}

}  // namespace
}  // namespace curlretry::core::budget
