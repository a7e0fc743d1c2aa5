#include "core/civil_date.h"

#include <gtest/gtest.h>

namespace curlretry::core {
namespace {

TEST(CivilDate, KnownDays) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
  EXPECT_EQ(days_from_civil(2000, 3, 1), 11017);
  EXPECT_EQ(days_from_civil(2026, 11, 30), 20787);
  const CivilDate leap = civil_from_days(days_from_civil(2000, 2, 29));
  EXPECT_EQ(leap.year, 2000);
  EXPECT_EQ(leap.month, 2u);
  EXPECT_EQ(leap.day, 29u);
  const CivilDate before = civil_from_days(-1);
  EXPECT_EQ(before.year, 1969);
  EXPECT_EQ(before.month, 12u);
  EXPECT_EQ(before.day, 31u);
}

TEST(CivilDate, RoundTripsEveryDayFrom1600To2400) {
  std::int64_t expected = days_from_civil(1600, 1, 1);
  for (std::int64_t y = 1600; y < 2400; ++y) {
    for (unsigned m = 1; m <= 12; ++m) {
      const bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
      const unsigned length = m == 2 ? (leap ? 29 : 28) : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
      for (unsigned d = 1; d <= length; ++d, ++expected) {
        ASSERT_EQ(days_from_civil(y, m, d), expected) << y << "-" << m << "-" << d;
        const CivilDate back = civil_from_days(expected);
        ASSERT_EQ(back.year, y);
        ASSERT_EQ(back.month, m);
        ASSERT_EQ(back.day, d);
      }
    }
  }
}

}  // namespace
}  // namespace curlretry::core
