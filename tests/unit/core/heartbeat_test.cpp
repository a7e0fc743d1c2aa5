// "Still waiting" lines: when they are due, and what they say, on a fake clock.
#include <gtest/gtest.h>

#include <vector>

#include "core/backoff.h"
#include "core/heartbeat.h"
#include "fixed_random.h"

namespace curlretry::core {
namespace {

using Time = Heartbeat::Time;
using std::chrono::milliseconds;

Time t0() { return Time{} + std::chrono::hours(1000); }

// Lines a waiter polling every `slice` would print during a wait of `wait`.
std::vector<long> lines_at(Millis wait, Millis period, Millis slice) {
  Heartbeat h;
  const Time start = t0();
  h.arm(start, wait, period);
  std::vector<long> at;
  for (Time now = start; now < start + wait; now += slice) {
    if (h.due(now)) at.push_back(static_cast<long>((now - start) / milliseconds(1)));
  }
  return at;
}

TEST(Heartbeat, OneLinePerPeriodWhileTheWaitLasts) {
  EXPECT_EQ(lines_at(Millis{100000}, Millis{30000}, Millis{100}), (std::vector<long>{30000, 60000, 90000}));
}

TEST(Heartbeat, NoLineWhenTheWaitIsNotLongerThanThePeriod) {
  EXPECT_TRUE(lines_at(Millis{29999}, Millis{30000}, Millis{100}).empty());
  EXPECT_TRUE(lines_at(Millis{30000}, Millis{30000}, Millis{100}).empty());
  Heartbeat h;
  h.arm(t0(), Millis{30000}, Millis{30000});
  EXPECT_FALSE(h.next().has_value());
}

TEST(Heartbeat, NoLineAtTheExactEndOfTheWait) {
  // 60 s wait, 30 s period: a line at 30 s only, the try itself comes at 60 s.
  EXPECT_EQ(lines_at(Millis{60000}, Millis{30000}, Millis{100}), (std::vector<long>{30000}));
}

TEST(Heartbeat, PeriodZeroIsOff) { EXPECT_TRUE(lines_at(Millis{600000}, Millis{0}, Millis{1000}).empty()); }

TEST(Heartbeat, ALateWakeSaysItOnceAndKeepsTheGrid) {
  Heartbeat h;
  const Time start = t0();
  h.arm(start, Millis{300000}, Millis{30000});
  EXPECT_FALSE(h.due(start + Millis{29999}));
  EXPECT_TRUE(h.due(start + Millis{95000}));  // woke after three periods: one line
  ASSERT_TRUE(h.next().has_value());
  EXPECT_EQ(*h.next(), start + Millis{120000});
  EXPECT_FALSE(h.due(start + Millis{119999}));
  EXPECT_TRUE(h.due(start + Millis{120000}));
}

// Three hours of persistent retrying (exponential from 1.5 s, capped at 5 min): every line
// falls on a 30 s boundary of its own wait, and the count is what the waits add up to.
TEST(Heartbeat, ThreeHoursOfPersistentWaiting) {
  const Backoff backoff{Strategy::exponential, Millis{1500}, Millis{300000}, Jitter::none};
  testing::FixedRandom random;
  Time now = t0();
  const Time end = now + std::chrono::hours(3);
  long lines = 0;
  long expected = 0;
  int attempt = 1;
  for (; now < end; ++attempt) {
    const Millis wait = backoff_delay(backoff, attempt, Millis{0}, random);
    expected += (wait.count() - 1) / 30000;  // boundaries strictly inside the wait
    Heartbeat h;
    h.arm(now, wait, Millis{30000});
    while (auto next = h.next()) {
      EXPECT_EQ((*next - now) % Millis{30000}, Millis{0});
      EXPECT_TRUE(h.due(*next));
      ++lines;
    }
    now += wait;
  }
  EXPECT_EQ(lines, expected);
  // 1.5+3+...+192 s, then 5-minute waits of 9 lines each fill the rest of the three hours.
  EXPECT_GT(lines, 300);
  EXPECT_GT(attempt, 30);
}

TEST(HeartbeatLine, SaysWhatWhereAndHowLong) {
  EXPECT_EQ(heartbeat_line("POST api.anthropic.com/v1/messages", heartbeat_cause(529, true, "HTTP 529"), 14,
                           Millis{750000}, Millis{250000}),
            "still waiting for POST api.anthropic.com/v1/messages (529 overloaded, attempt 14, 12m30s so far, "
            "next try in 4m10s)");
  EXPECT_EQ(heartbeat_cause(0, false, "connection reset"), "connection reset");
  EXPECT_EQ(heartbeat_cause(418, true, "HTTP 418"), "418");
  EXPECT_EQ(heartbeat_cause(400, true, "HTTP 400 captcha (risk-control)"), "400 captcha (risk-control)");
  EXPECT_EQ(heartbeat_cause(400, true, "something else"), "400");
}

TEST(HeartbeatLine, Durations) {
  EXPECT_EQ(format_duration(Millis{2500}), "2.5s");
  EXPECT_EQ(format_duration(Millis{45000}), "45s");
  EXPECT_EQ(format_duration(Millis{10800000}), "3h00m00s");
  EXPECT_EQ(format_duration(Millis{-5}), "0.0s");
}

}  // namespace
}  // namespace curlretry::core
