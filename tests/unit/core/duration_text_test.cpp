#include "core/duration_text.h"

#include <gtest/gtest.h>

namespace curlretry::core {
namespace {

TEST(HumanDuration, MillisecondsUpToTenSecondsThenSecondsThenHours) {
  EXPECT_EQ(human_duration(Millis{0}), "0 ms");
  EXPECT_EQ(human_duration(Millis{1500}), "1500 ms");
  EXPECT_EQ(human_duration(Millis{10000}), "10000 ms");
  EXPECT_EQ(human_duration(Millis{10001}), "10 s");
  EXPECT_EQ(human_duration(Millis{12500}), "12.5 s");
  EXPECT_EQ(human_duration(Millis{25000}), "25 s");
  EXPECT_EQ(human_duration(Millis{120000}), "120 s");
  EXPECT_EQ(human_duration(Millis{200000}), "200 s");
  EXPECT_EQ(human_duration(Millis{3599999}), "3600 s");
  EXPECT_EQ(human_duration(Millis{3600000}), "1 h");
  EXPECT_EQ(human_duration(Millis{7500000}), "2 h 5 min");
}

}  // namespace
}  // namespace curlretry::core
