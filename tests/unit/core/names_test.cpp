#include <gtest/gtest.h>

#include "core/outcome.h"
#include "core/policy.h"
#include "core/reason.h"

namespace curlretry::core {
namespace {

TEST(Names, EveryTransportRoundTrips) {
  for (int i = 0; i <= static_cast<int>(Transport::other); ++i) {
    const auto t = static_cast<Transport>(i);
    EXPECT_EQ(transport_from_string(to_string(t)), t) << to_string(t);
  }
}

TEST(Names, TransportSpellingsAreTheConfigNames) {
  EXPECT_EQ(to_string(Transport::ok), "ok");
  EXPECT_EQ(to_string(Transport::connect_refused), "connect_refused");
  EXPECT_EQ(to_string(Transport::reset), "reset");
  EXPECT_EQ(to_string(Transport::send), "send");
  EXPECT_EQ(to_string(Transport::recv), "recv");
  EXPECT_EQ(to_string(Transport::empty_reply), "empty_reply");
  EXPECT_EQ(to_string(Transport::tls_handshake), "tls_handshake");
  EXPECT_EQ(to_string(Transport::http2_stream), "http2_stream");
  EXPECT_EQ(to_string(Transport::timeout), "timeout");
  EXPECT_EQ(to_string(Transport::host_abort), "host_abort");
  EXPECT_EQ(to_string(Transport::bad_argument), "bad_argument");
  EXPECT_EQ(to_string(Transport::other), "other");
}

TEST(Names, StrategiesAndJittersRoundTrip) {
  for (auto s : {Strategy::exponential, Strategy::triangular, Strategy::constant}) {
    EXPECT_EQ(strategy_from_string(to_string(s)), s);
  }
  for (auto j : {Jitter::none, Jitter::full, Jitter::equal, Jitter::decorrelated}) {
    EXPECT_EQ(jitter_from_string(to_string(j)), j);
  }
  EXPECT_EQ(to_string(Strategy::triangular), "triangular");
  EXPECT_EQ(to_string(Jitter::decorrelated), "decorrelated");
}

TEST(Names, UnknownNamesAreRejected) {
  EXPECT_EQ(transport_from_string(""), std::nullopt);
  EXPECT_EQ(transport_from_string("connection-reset"), std::nullopt);
  EXPECT_EQ(transport_from_string("reset "), std::nullopt);
  EXPECT_EQ(strategy_from_string("linear"), std::nullopt);
  EXPECT_EQ(jitter_from_string("half"), std::nullopt);
}

TEST(Names, OutOfRangeEnumPrintsUnknownInsteadOfReadingPastTheTable) {
  EXPECT_EQ(to_string(static_cast<Transport>(200)), "unknown");
  EXPECT_EQ(to_string(static_cast<Strategy>(200)), "unknown");
  EXPECT_EQ(to_string(static_cast<Jitter>(200)), "unknown");
}

TEST(Names, EveryReasonRoundTripsThroughItsText) {
  for (int i = 0; i <= static_cast<int>(Reason::disabled); ++i) {
    const auto r = static_cast<Reason>(i);
    const std::string detail = has_detail(r) ? "daily quota: x" : "";
    const std::string text = reason_text(r, detail);
    const auto parsed = parse_reason(text);  // its detail points into `text`
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(parsed->reason, r) << text;
    EXPECT_EQ(parsed->detail, detail);
  }
}

TEST(Names, ReasonSpellingsAreTheAttemptLogs) {
  EXPECT_EQ(reason_text(Reason::status, "503"), "status:503");
  EXPECT_EQ(reason_text(Reason::permanent_code, "1113"), "permanent-code:1113");
  EXPECT_EQ(reason_text(Reason::stream_error, "overloaded_error"), "stream-error:overloaded_error");
  EXPECT_EQ(reason_text(Reason::should_retry_false, "ignored"), "should-retry:false");
  EXPECT_EQ(reason_text(Reason::retry_after_too_long, ""), "retry-after-too-long");
  EXPECT_EQ(reason_text(Reason::auth_refresh, ""), "auth-refresh");
  EXPECT_FALSE(parse_reason("status").has_value());  // a reason with detail always has its colon
  EXPECT_FALSE(parse_reason("exhausted:3").has_value());
  EXPECT_FALSE(parse_reason("").has_value());
  EXPECT_FALSE(parse_reason("nonsense:1").has_value());
  EXPECT_EQ(to_string(static_cast<Reason>(200)), "unknown");
}

TEST(Names, VerdictKinds) {
  for (const auto v : {VerdictKind::retry, VerdictKind::give_up, VerdictKind::success}) {
    EXPECT_EQ(verdict_kind_from_string(to_string(v)), v);
  }
  EXPECT_EQ(to_string(VerdictKind::give_up), "give_up");
  EXPECT_FALSE(verdict_kind_from_string("gave_up").has_value());
}

}  // namespace
}  // namespace curlretry::core
