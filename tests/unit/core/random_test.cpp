#include <gtest/gtest.h>

#include "core/random.h"

namespace curlretry::core {
namespace {

TEST(SplitMix, SeedZeroGivesTheReferenceSplitmix64StreamAsTop53Bits) {
  SplitMix random(0);
  // splitmix64(0) reference outputs 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f.
  EXPECT_EQ(random.uniform(), static_cast<double>(0xe220a8397b1dcdafULL >> 11) * 0x1.0p-53);
  EXPECT_EQ(random.uniform(), static_cast<double>(0x6e789e6aa1b965f4ULL >> 11) * 0x1.0p-53);
  EXPECT_EQ(random.uniform(), static_cast<double>(0x06c45d188009454fULL >> 11) * 0x1.0p-53);
}

TEST(SplitMix, SameSeedSameSequence) {
  SplitMix a(42);
  SplitMix b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.uniform(), b.uniform());
}

TEST(SplitMix, StaysInHalfOpenUnitInterval) {
  SplitMix random(0xdeadbeef);
  for (int i = 0; i < 100000; ++i) {
    const double u = random.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace curlretry::core
