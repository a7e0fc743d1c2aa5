#include <gtest/gtest.h>

#include <algorithm>

#include "core/policy.h"

namespace curlretry::core {
namespace {

TEST(BuiltinPolicy, EncodesTheSeeds) {
  const Policy p = Policy::builtin();
  EXPECT_EQ(p.max_attempts, 3);
  EXPECT_EQ(p.max_elapsed, Millis{1800000});
  EXPECT_EQ(p.backoff.strategy, Strategy::exponential);
  EXPECT_EQ(p.backoff.base, Millis{1500});
  EXPECT_EQ(p.backoff.max, Millis{60000});
  EXPECT_EQ(p.backoff.jitter, Jitter::none);
  EXPECT_TRUE(p.honor_retry_after);
  EXPECT_EQ(p.max_retry_after, Millis{120000});
  EXPECT_EQ(p.retry_status, (std::vector<int>{408, 429, 500, 502, 503, 504, 529}));
  EXPECT_EQ(p.retry_markers, (std::vector<std::string>{"captcha", "verify failed", "risk control", "风控",
                                                       "rate limit", "too many requests", "try again"}));
  EXPECT_EQ(p.permanent_markers, (std::vector<std::string>{"per day", "daily quota", "monthly", "billing",
                                                           "upgrade your plan", "insufficient_quota", "context length",
                                                           "prompt too long", "usage_limit_reached"}));
  EXPECT_EQ(p.retry_transport,
            (std::vector<Transport>{Transport::connect_refused, Transport::reset, Transport::send, Transport::recv,
                                    Transport::empty_reply, Transport::tls_handshake, Transport::http2_stream}));
  EXPECT_TRUE(p.codes.empty());
  EXPECT_EQ(p.body_window, 4096u);
}

TEST(BuiltinPolicy, DoesNotRetryTimeouts) {
  const Policy p = Policy::builtin();
  EXPECT_EQ(std::find(p.retry_transport.begin(), p.retry_transport.end(), Transport::timeout),
            p.retry_transport.end());
}

}  // namespace
}  // namespace curlretry::core
