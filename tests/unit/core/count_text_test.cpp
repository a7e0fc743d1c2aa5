#include "core/count_text.h"

#include <gtest/gtest.h>

namespace curlretry::core {
namespace {

TEST(CountText, TheSingularIsForExactlyOne) {
  EXPECT_EQ(counted(1, "attempt", "attempts"), "1 attempt");
  EXPECT_EQ(counted(0, "attempt", "attempts"), "0 attempts");
  EXPECT_EQ(counted(2, "process", "processes"), "2 processes");
  EXPECT_EQ(counted(-1, "line", "lines"), "-1 lines");
  EXPECT_EQ(counted(11, "other connection", "other connections"), "11 other connections");
}

}  // namespace
}  // namespace curlretry::core
