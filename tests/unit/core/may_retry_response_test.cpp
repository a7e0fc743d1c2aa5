#include <gtest/gtest.h>

#include "core/decide.h"
#include "decide_test_support.h"

namespace curlretry::core {
namespace {

using testing::kBuiltin;

TEST(MayRetryResponse, ErrorResponsesAreHeldForClassification) {
  for (int status : {400, 404, 429, 500, 503, 529, 599}) {
    EXPECT_TRUE(may_retry_response(kBuiltin, status, std::nullopt)) << status;
  }
}

TEST(MayRetryResponse, SuccessAndRedirectStreamAtOnce) {
  for (int status : {200, 204, 206, 301, 304, 399}) {
    EXPECT_FALSE(may_retry_response(kBuiltin, status, std::nullopt)) << status;
  }
}

TEST(MayRetryResponse, ShouldRetryTrueDoesNotHoldA200) {
  // decide() calls a complete 2xx a success whatever x-should-retry says.
  EXPECT_FALSE(may_retry_response(kBuiltin, 200, std::string("true")));
}

TEST(MayRetryResponse, ShouldRetryTrueHoldsAnUnfinishedStatus) {
  EXPECT_TRUE(may_retry_response(kBuiltin, 0, std::string("True")));
  EXPECT_TRUE(may_retry_response(kBuiltin, 100, std::string("true")));
  EXPECT_FALSE(may_retry_response(kBuiltin, 0, std::string("false")));
  EXPECT_FALSE(may_retry_response(kBuiltin, 0, std::string("yes")));
  EXPECT_FALSE(may_retry_response(kBuiltin, 0, std::nullopt));
}

TEST(MayRetryResponse, ShouldRetryFalseStillHoldsAnErrorForItsLogLine) {
  EXPECT_TRUE(may_retry_response(kBuiltin, 503, std::string("false")));
}

TEST(MayRetryResponse, SingleAttemptPolicyNeverHolds) {
  Policy p = Policy::builtin();
  p.max_attempts = 1;
  EXPECT_FALSE(may_retry_response(p, 503, std::nullopt));
  EXPECT_FALSE(may_retry_response(p, 0, std::string("true")));
}

TEST(MayRetryResponse, UnlimitedAttemptsHold) {
  Policy p = Policy::builtin();
  p.max_attempts = -1;
  EXPECT_TRUE(may_retry_response(p, 503, std::nullopt));
}

}  // namespace
}  // namespace curlretry::core
