#include <gtest/gtest.h>

#include "core/cooldown.h"

namespace curlretry::core::cooldown {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

const system_clock::time_point kNow = sys_days{2026y / January / 15} + 12h;

Signal with_status(int status) {
  Signal s;
  s.status = status;
  return s;
}

TEST(Cooldown, OnlyRateLimitAndOverloadCoolTheFleet) {
  EXPECT_TRUE(cools_fleet(429));
  EXPECT_TRUE(cools_fleet(503));
  EXPECT_TRUE(cools_fleet(529));
  EXPECT_FALSE(cools_fleet(500));
  EXPECT_FALSE(cools_fleet(502));
  EXPECT_FALSE(cools_fleet(0));
  EXPECT_TRUE(per_credential(429));
  EXPECT_FALSE(per_credential(503));
}

TEST(Cooldown, RetryAfterSecondsOn503) {
  Signal s = with_status(503);
  s.hints.retry_after = "30";
  EXPECT_EQ(wait_of(s, kNow), 30000ms);
}

TEST(Cooldown, RetryAfterHttpDate) {
  Signal s = with_status(429);
  s.hints.retry_after = "Thu, 15 Jan 2026 12:00:05 GMT";
  EXPECT_EQ(wait_of(s, kNow), 5000ms);
}

TEST(Cooldown, RetryAfterMsWinsOverRetryAfter) {
  Signal s = with_status(529);
  s.hints.retry_after = "30";
  s.hints.retry_after_ms = "1500";
  EXPECT_EQ(wait_of(s, kNow), 1500ms);
}

TEST(Cooldown, AStatusThatDoesNotCoolIgnoresItsHeaders) {
  Signal s = with_status(500);
  s.hints.retry_after = "30";
  EXPECT_EQ(wait_of(s, kNow), std::nullopt);
}

TEST(Cooldown, NoSignalNoCooldown) { EXPECT_EQ(wait_of(with_status(429), kNow), std::nullopt); }

TEST(Cooldown, GarbageRetryAfterIsNoSignal) {
  Signal s = with_status(429);
  s.hints.retry_after = "soon";
  EXPECT_EQ(wait_of(s, kNow), std::nullopt);
}

TEST(Cooldown, AnthropicRequestsReset) {
  Signal s = with_status(429);
  s.hints.requests_reset = "2026-01-15T12:00:20Z";
  EXPECT_EQ(wait_of(s, kNow), 20000ms);
}

TEST(Cooldown, OpenAiResetRequests) {
  Signal s = with_status(429);
  s.hints.reset_requests = "1m30.5s";
  EXPECT_EQ(wait_of(s, kNow), 90500ms);
}

TEST(Cooldown, TheLaterResetHeaderWins) {
  Signal s = with_status(429);
  s.hints.requests_reset = "2026-01-15T12:00:02Z";
  s.hints.reset_requests = "7s";
  EXPECT_EQ(wait_of(s, kNow), 7000ms);
}

TEST(Cooldown, ResetHeadersCountOnlyWithoutRetryAfter) {
  // A server that said when (even unreadably) is not second-guessed by its reset headers.
  Signal s = with_status(429);
  s.hints.reset_requests = "7s";
  s.hints.retry_after = "2";
  EXPECT_EQ(wait_of(s, kNow), 2000ms);
  s.hints.retry_after = "soon";
  EXPECT_EQ(wait_of(s, kNow), std::nullopt);
  s.hints.retry_after.reset();
  s.hints.retry_after_ms = "later";
  EXPECT_EQ(wait_of(s, kNow), std::nullopt);
  s.hints.retry_after_ms.reset();
  EXPECT_EQ(wait_of(s, kNow), 7000ms);
}

TEST(Cooldown, AResetInThePastIsZero) {
  Signal s = with_status(429);
  s.hints.requests_reset = "2026-01-15T11:00:00Z";
  EXPECT_EQ(wait_of(s, kNow), 0ms);
}

TEST(Cooldown, ClampedToADay) {
  Signal s = with_status(503);
  s.hints.retry_after = "999999999";
  EXPECT_EQ(wait_of(s, kNow), kMaxCooldown);
}

TEST(ResetDuration, Forms) {
  EXPECT_EQ(parse_reset_duration("1s"), 1000ms);
  EXPECT_EQ(parse_reset_duration("6m0s"), 360000ms);
  EXPECT_EQ(parse_reset_duration("20ms"), 20ms);
  EXPECT_EQ(parse_reset_duration("0.5s"), 500ms);
  EXPECT_EQ(parse_reset_duration("1h2m3s"), 3723000ms);
  EXPECT_EQ(parse_reset_duration(" 2s "), 2000ms);
}

TEST(ResetDuration, RejectsWhatItCannotRead) {
  EXPECT_EQ(parse_reset_duration(""), std::nullopt);
  EXPECT_EQ(parse_reset_duration("12"), std::nullopt);
  EXPECT_EQ(parse_reset_duration("s"), std::nullopt);
  EXPECT_EQ(parse_reset_duration("-1s"), std::nullopt);
  EXPECT_EQ(parse_reset_duration("1d"), std::nullopt);
  EXPECT_EQ(parse_reset_duration("99999999999999s"), std::nullopt);
}

TEST(Rfc3339, ZoneOffsetAndFraction) {
  auto t = parse_rfc3339("2026-01-15T13:00:30.25+01:00");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, time_point_cast<milliseconds>(kNow) + 30250ms);
  auto u = parse_rfc3339("2026-01-15t11:59:59z");
  ASSERT_TRUE(u);
  EXPECT_EQ(*u, time_point_cast<milliseconds>(kNow) - 1s);
}

TEST(Rfc3339, RejectsMissingZoneAndJunk) {
  EXPECT_EQ(parse_rfc3339("2026-01-15T12:00:00"), std::nullopt);
  EXPECT_EQ(parse_rfc3339("2026-01-15T12:00:00Zjunk"), std::nullopt);
  EXPECT_EQ(parse_rfc3339("2026-13-15T12:00:00Z"), std::nullopt);
  EXPECT_EQ(parse_rfc3339("tomorrow"), std::nullopt);
  EXPECT_EQ(parse_rfc3339("2026-01-15T12:00:00."), std::nullopt);
}

TEST(Cooldown, RemainingAndCombine) {
  EXPECT_EQ(remaining(10'500, 10'000), 500ms);
  EXPECT_EQ(remaining(10'000, 10'500), 0ms);
  EXPECT_EQ(combine(1500ms, 200ms), 1500ms);
  EXPECT_EQ(combine(1500ms, 9000ms), 9000ms);
}

TEST(Cooldown, FitsRespectsServerCapAndTimeLeft) {
  EXPECT_TRUE(fits(5000ms, 120000ms, std::nullopt));
  EXPECT_FALSE(fits(130000ms, 120000ms, std::nullopt));
  EXPECT_TRUE(fits(5000ms, 120000ms, 6000ms));
  EXPECT_FALSE(fits(5000ms, 120000ms, 5000ms));
}

}  // namespace
}  // namespace curlretry::core::cooldown
