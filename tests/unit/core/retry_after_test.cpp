#include <gtest/gtest.h>

#include "core/retry_after.h"

namespace curlretry::core {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

// The RFC 9110 example instant, computed by the standard library rather than by the code under test.
const sys_seconds kRfcExample = sys_days{1994y / November / 6} + 8h + 49min + 37s;
const system_clock::time_point kNow2026 = sys_days{2026y / January / 15} + 12h;

TEST(HttpDate, RfcExampleIs784111777) { EXPECT_EQ(kRfcExample.time_since_epoch(), 784111777s); }

TEST(HttpDate, ParsesImfFixdate) {
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), kRfcExample);
}

TEST(HttpDate, ParsesRfc850) {
  EXPECT_EQ(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), kRfcExample);
}

TEST(HttpDate, ParsesAsctimeWithSpacePaddedDay) {
  EXPECT_EQ(parse_http_date("Sun Nov  6 08:49:37 1994"), kRfcExample);
}

TEST(HttpDate, ParsesAsctimeWithTwoDigitDay) {
  EXPECT_EQ(parse_http_date("Wed Nov 16 08:49:37 1994"), sys_days{1994y / November / 16} + 8h + 49min + 37s);
}

TEST(HttpDate, LeapDayAndEpochAndFarFuture) {
  EXPECT_EQ(parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT"), sys_days{2024y / February / 29});
  EXPECT_EQ(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), sys_seconds{0s});
  EXPECT_EQ(parse_http_date("Fri, 31 Dec 9999 23:59:59 GMT"), sys_days{9999y / December / 31} + 23h + 59min + 59s);
  EXPECT_EQ(parse_http_date("Wed, 01 Mar 2000 00:00:00 GMT"), sys_days{2000y / March / 1});
}

TEST(HttpDate, RejectsImpossibleDates) {
  EXPECT_EQ(parse_http_date("Fri, 29 Feb 2023 00:00:00 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Mon, 29 Feb 1900 00:00:00 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 31 Apr 1994 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 00 Nov 1994 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 24:00:00 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:60:00 GMT"), std::nullopt);
}

TEST(HttpDate, RejectsNearMisses) {
  EXPECT_EQ(parse_http_date(""), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 6 Nov 1994 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 94 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT trailing"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sunday, 06-Nov-1994 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun Nov 6 08:49:37 1994"), std::nullopt);
  EXPECT_EQ(parse_http_date("Sun Nov  6 08:49:37 1994 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("2024-01-01T00:00:00Z"), std::nullopt);
}

TEST(HttpDate, NamesAreMatchedIgnoringCase) {
  EXPECT_EQ(parse_http_date("SUN, 06 NOV 1994 08:49:37 GMT"), kRfcExample);
}

TEST(HttpDate, Rfc850WithoutClockUsesPivotSeventy) {
  EXPECT_EQ(parse_http_date("Monday, 01-Jan-69 00:00:00 GMT"), sys_days{2069y / January / 1});
  EXPECT_EQ(parse_http_date("Thursday, 01-Jan-70 00:00:00 GMT"), sys_days{1970y / January / 1});
}

TEST(RetryAfter, DeltaSecondsInMilliseconds) {
  EXPECT_EQ(parse_retry_after("7", kNow2026), Millis{7000});
  EXPECT_EQ(parse_retry_after("0", kNow2026), Millis{0});
  EXPECT_EQ(parse_retry_after("120", kNow2026), Millis{120000});
  EXPECT_EQ(parse_retry_after("007", kNow2026), Millis{7000});
}

TEST(RetryAfter, SurroundingWhitespaceIsTrimmed) {
  EXPECT_EQ(parse_retry_after("  7 \t", kNow2026), Millis{7000});
  EXPECT_EQ(parse_retry_after(" Sun, 06 Nov 1994 08:49:37 GMT  ", kRfcExample - 5s), Millis{5000});
}

TEST(RetryAfter, GarbageIsRejected) {
  EXPECT_EQ(parse_retry_after("", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("   ", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("soon", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("7s", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("1.5", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("7 8", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("0x10", kNow2026), std::nullopt);
}

TEST(RetryAfter, SignedNumbersAreRejected) {
  EXPECT_EQ(parse_retry_after("-1", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("+5", kNow2026), std::nullopt);
}

TEST(RetryAfter, OverflowIsRejected) {
  EXPECT_EQ(parse_retry_after("99999999999999999999", kNow2026), std::nullopt);
  // Fits in 64 bits as seconds, but not once converted to milliseconds.
  EXPECT_EQ(parse_retry_after("9223372036854776", kNow2026), std::nullopt);
  EXPECT_EQ(parse_retry_after("9223372036854775", kNow2026), Millis{9223372036854775000});
}

TEST(RetryAfter, ImfDateInTheFutureIsTheWait) {
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", kRfcExample - 90s), Millis{90000});
}

TEST(RetryAfter, Rfc850DateInTheFutureIsTheWait) {
  EXPECT_EQ(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", kRfcExample - 30s), Millis{30000});
}

TEST(RetryAfter, AsctimeDateInTheFutureIsTheWait) {
  EXPECT_EQ(parse_retry_after("Sun Nov  6 08:49:37 1994", kRfcExample - 2s), Millis{2000});
}

TEST(RetryAfter, DateIsRoundedUpToTheMillisecond) {
  // 1.5 ms before the date: the wait must not end before it.
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", kRfcExample - 1500us), Millis{2});
}

TEST(RetryAfter, PastDateMeansNoWait) {
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", kNow2026), Millis{0});
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", kRfcExample), Millis{0});
}

TEST(RetryAfter, FarFutureDateDoesNotOverflow) {
  const auto wait = parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", kNow2026);
  ASSERT_TRUE(wait.has_value());
  // Subtracting in seconds: the clock's nanosecond ticks cannot hold year 9999.
  const sys_seconds date = sys_days{9999y / December / 31} + 23h + 59min + 59s;
  EXPECT_EQ(*wait, duration_cast<Millis>(date - time_point_cast<seconds>(kNow2026)));
}

TEST(RetryAfter, Rfc850YearMoreThanFiftyYearsAheadIsLastCentury) {
  // Now is 2026: "94" would be 2094, more than 50 years ahead, so it is 1994.
  EXPECT_EQ(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", kNow2026), Millis{0});
  // "76" is 2076, exactly 50 years ahead: kept.
  const auto y2076 = parse_retry_after("Sunday, 01-Jan-76 00:00:00 GMT", kNow2026);
  ASSERT_TRUE(y2076.has_value());
  EXPECT_EQ(*y2076, duration_cast<Millis>(sys_days{2076y / January / 1} - kNow2026));
  // "77" is 2077, 51 years ahead: 1977, in the past.
  EXPECT_EQ(parse_retry_after("Saturday, 01-Jan-77 00:00:00 GMT", kNow2026), Millis{0});
}

TEST(RetryAfter, Rfc850NearFutureInTheSameCentury) {
  EXPECT_EQ(parse_retry_after("Thursday, 15-Jan-26 12:00:10 GMT", kNow2026), Millis{10000});
}

TEST(RetryAfter, Rfc850NearCenturyEndRollsForward) {
  // Late in a century, "05" is five years ahead in the next one, not 90 years ago.
  const system_clock::time_point now = sys_days{2099y / June / 1};
  const auto wait = parse_retry_after("Sunday, 01-Jan-05 00:00:00 GMT", now);
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(*wait, duration_cast<Millis>(sys_days{2105y / January / 1} - now));
}

TEST(RetryAfterMs, WholeMilliseconds) {
  EXPECT_EQ(parse_retry_after_ms("1500"), Millis{1500});
  EXPECT_EQ(parse_retry_after_ms("0"), Millis{0});
  EXPECT_EQ(parse_retry_after_ms(" 250 "), Millis{250});
}

TEST(RetryAfterMs, FractionRoundsUp) {
  EXPECT_EQ(parse_retry_after_ms("12.5"), Millis{13});
  EXPECT_EQ(parse_retry_after_ms("12.001"), Millis{13});
  EXPECT_EQ(parse_retry_after_ms("12.000"), Millis{12});
  EXPECT_EQ(parse_retry_after_ms("0.2"), Millis{1});
  EXPECT_EQ(parse_retry_after_ms(".5"), Millis{1});
  EXPECT_EQ(parse_retry_after_ms("7."), Millis{7});
}

TEST(RetryAfterMs, GarbageSignsAndOverflowAreRejected) {
  EXPECT_EQ(parse_retry_after_ms(""), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("."), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("-5"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("+5"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("1e3"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("1.2.3"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("12ms"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("nan"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("99999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("9223372036854775807.5"), std::nullopt);
}

}  // namespace
}  // namespace curlretry::core
