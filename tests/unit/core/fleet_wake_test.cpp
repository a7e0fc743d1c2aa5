#include "core/fleet_wake.h"

#include <gtest/gtest.h>

namespace curlretry::core::fleet_wake {
namespace {

constexpr std::int64_t kNow = 1'764'460'800'000;

std::uint32_t stamp(std::int64_t ms) { return static_cast<std::uint32_t>(static_cast<std::uint64_t>(ms)) | 1u; }

TEST(FleetWake, ARetryOnAHealthyKeyIsNeverWoken) {
  EXPECT_EQ(park_stamp(true, kNow), 0u);
  EXPECT_FALSE(woken(park_stamp(true, kNow), stamp(kNow + 5000)));
}

TEST(FleetWake, ARetryThatMetAnOutageIsWokenByASuccessSentAfterItsAnswer) {
  const std::uint32_t parked = park_stamp(false, kNow);
  EXPECT_NE(parked, 0u);
  EXPECT_TRUE(woken(parked, stamp(kNow + 2)));
  EXPECT_TRUE(woken(parked, stamp(kNow + 60'000)));
}

TEST(FleetWake, ASuccessSentBeforeTheAnswerIsNoEvidence) {
  const std::uint32_t parked = park_stamp(false, kNow);
  EXPECT_FALSE(woken(parked, stamp(kNow - 1500)));  // the outage's last success
  EXPECT_FALSE(woken(parked, stamp(kNow)));         // the same millisecond: not after
  EXPECT_FALSE(woken(parked, 0));                   // no success ever
}

TEST(FleetWake, TheStampWrapsAroundTwoToThe32) {
  // A parked stamp just below 2^32 and a success just past the wrap.
  const std::int64_t before_wrap = (std::int64_t{1} << 32) * 411 - 3;
  const std::uint32_t parked = park_stamp(false, before_wrap);
  EXPECT_TRUE(woken(parked, stamp(before_wrap + 10)));
  EXPECT_FALSE(woken(parked, stamp(before_wrap - 10)));
}

}  // namespace
}  // namespace curlretry::core::fleet_wake
