#include <gtest/gtest.h>

#include "core/hints.h"

namespace curlretry::core {
namespace {

TEST(Hints, EveryTableRowIsTakenByItsName) {
  for (const HintHeader& h : kHintHeaders) {
    ResponseHints hints;
    EXPECT_TRUE(hints.take(h.name, "v", 429)) << h.name;
    EXPECT_EQ(hints.*h.field, "v") << h.name;
  }
}

TEST(Hints, NamesCompareWithoutCase) {
  ResponseHints hints;
  EXPECT_TRUE(hints.take("Retry-After", "7", 503));
  EXPECT_TRUE(hints.take("RETRY-AFTER-MS", "1500", 503));
  EXPECT_TRUE(hints.take("X-Should-Retry", "true", 503));
  EXPECT_TRUE(hints.take("Anthropic-RateLimit-Requests-Reset", "2026-01-15T12:00:20Z", 429));
  EXPECT_TRUE(hints.take("X-RateLimit-Reset-Requests", "6m0s", 429));
  EXPECT_EQ(hints.retry_after, "7");
  EXPECT_EQ(hints.retry_after_ms, "1500");
  EXPECT_EQ(hints.should_retry, "true");
  EXPECT_EQ(hints.requests_reset, "2026-01-15T12:00:20Z");
  EXPECT_EQ(hints.reset_requests, "6m0s");
}

TEST(Hints, TheFirstOfARepeatedHeaderCounts) {
  ResponseHints hints;
  EXPECT_TRUE(hints.take("retry-after", "0", 503));
  EXPECT_TRUE(hints.take("Retry-After", "Thu, 15 Jan 2026 13:00:00 GMT", 503));
  EXPECT_EQ(hints.retry_after, "0");
}

TEST(Hints, AnEmptyFirstValueStillCounts) {
  // An empty value is a present header: the second does not replace it (as curl_easy_header()).
  ResponseHints hints;
  hints.take("x-should-retry", " \r\n", 200);
  hints.take("x-should-retry", "true", 200);
  EXPECT_EQ(hints.should_retry, "");
}

TEST(Hints, ValuesAreTrimmedAsFieldValues) {
  ResponseHints hints;
  hints.take("retry-after", " \t 30 \t\r\n", 503);  // a header line's tail
  hints.take("retry-after-ms", "1500", 503);        // libcurl's value, already trimmed
  hints.take("x-should-retry", "\rtrue", 200);      // a CR before the value is kept: malformed
  EXPECT_EQ(hints.retry_after, "30");
  EXPECT_EQ(hints.retry_after_ms, "1500");
  EXPECT_EQ(hints.should_retry, "\rtrue");
}

TEST(Hints, OtherHeadersAreNoHints) {
  ResponseHints hints;
  EXPECT_FALSE(hints.take("retry-afte", "1", 503));
  EXPECT_FALSE(hints.take("retry-after-m", "1", 503));
  EXPECT_FALSE(hints.take("retry-after ", "1", 503));  // a space before the colon: not the header
  EXPECT_FALSE(hints.take("content-type", "text/plain", 503));
  EXPECT_FALSE(hints.take("", "1", 503));
  EXPECT_FALSE(hints.retry_after || hints.retry_after_ms || hints.should_retry);
}

TEST(Hints, ResetHeadersAreReadOnlyFromAResponseThatCoolsTheFleet) {
  for (int status : {200, 204, 301, 400, 500, 502, 0}) {
    ResponseHints hints;
    EXPECT_FALSE(hints.take("anthropic-ratelimit-requests-reset", "2026-01-15T12:00:20Z", status)) << status;
    EXPECT_FALSE(hints.take("x-ratelimit-reset-requests", "1s", status)) << status;
    EXPECT_FALSE(hints.requests_reset || hints.reset_requests) << status;
    // The decision's hints are read whatever the status.
    EXPECT_TRUE(hints.take("x-should-retry", "true", status)) << status;
  }
  for (int status : {429, 503, 529}) {
    ResponseHints hints;
    EXPECT_TRUE(hints.take("x-ratelimit-reset-requests", "1s", status)) << status;
  }
}

TEST(Hints, MayBeHintTestsTheFirstLetterForTheStatus) {
  // A success reads only r... and x... lines, as the header callback did before the table.
  for (char c : std::string_view("rRxX")) EXPECT_TRUE(may_be_hint(c, 200)) << c;
  for (char c : std::string_view("aAcdlsz-:\r\n \x80")) EXPECT_FALSE(may_be_hint(c, 200)) << c;
  EXPECT_TRUE(may_be_hint('a', 429));
  EXPECT_TRUE(may_be_hint('A', 503));
  EXPECT_FALSE(may_be_hint('c', 529));
  // Every row's own first letter passes for a status that needs it.
  for (const HintHeader& h : kHintHeaders) EXPECT_TRUE(may_be_hint(h.name[0], 429)) << h.name;
}

TEST(Hints, CoolingStatuses) {
  EXPECT_TRUE(cools_fleet(429));
  EXPECT_TRUE(cools_fleet(503));
  EXPECT_TRUE(cools_fleet(529));
  EXPECT_FALSE(cools_fleet(500));
  EXPECT_FALSE(cools_fleet(200));
  EXPECT_FALSE(cools_fleet(0));
}

}  // namespace
}  // namespace curlretry::core
