#include <gtest/gtest.h>

#include "core/outcome.h"
#include "core/policy.h"

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

}  // namespace
}  // namespace curlretry::core
