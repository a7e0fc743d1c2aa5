// The providers' own error vocabulary, known with no configuration: Google's google.rpc.Status
// in an error body and in an in-band stream event, RetryInfo as the server's wait, and OpenAI
// Responses' failure events. Bodies are the providers' real shapes.
#include "core/provider_errors.h"

#include <gtest/gtest.h>

#include "core/body_scan.h"
#include "decide_test_support.h"

namespace curlretry::core {
namespace {

using testing::decide_at;
using testing::kBuiltin;
using testing::stream_error;
using testing::response;


std::string gemini_quota(const char* quota_id, const char* delay) {
  return std::string(R"({"error":{"code":429,"message":"You exceeded your current quota, please check your plan )"
                     R"(and billing details.","status":"RESOURCE_EXHAUSTED","details":[)"
                     R"({"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":)"
                     R"("generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":")") +
         quota_id +
         R"("}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more",)"
         R"("url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},)"
         R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":")" +
         delay + R"("}]}})";
}

constexpr const char* kGeminiOverloaded =
    R"({"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}})";

TEST(JsonStringsNamed, FindsMembersInsideArraysInOrder) {
  EXPECT_EQ(json_strings_named(R"({"a":[{"k":"1"},{"x":{"k":"2"}}],"k":3,"z":{"k":"4"}})", "k", 8),
            (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(json_strings_named(R"({"a":[{"k":"1"},{"k":"2"}]})", "k", 1), std::vector<std::string>{"1"});
  // Cut short: what came before the cut is kept; a hostile nesting is bounded.
  EXPECT_EQ(json_strings_named(R"({"a":[{"k":"1"},{"k":"2)", "k", 8), std::vector<std::string>{"1"});
  EXPECT_TRUE(json_strings_named(std::string(100000, '[') + R"({"k":"deep"})", "k", 8).empty());
}

TEST(GoogleStatus, UnavailableRetriesByName) {
  const Verdict v = decide_at(kBuiltin, response(503, kGeminiOverloaded));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "code:UNAVAILABLE");
  EXPECT_EQ(v.what, "HTTP 503 status UNAVAILABLE");
  EXPECT_EQ(v.delay, Millis{1500});
}

TEST(GoogleStatus, PerMinuteQuotaRetriesAfterRetryDelayDespiteTheBillingWord) {
  // "billing" is a built-in permanent marker; only the quotaId tells a per-minute quota apart.
  const Verdict v =
      decide_at(kBuiltin, response(429, gemini_quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "53s")));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "code:RESOURCE_EXHAUSTED");
  EXPECT_EQ(v.what, "HTTP 429 status RESOURCE_EXHAUSTED per minute");
  EXPECT_EQ(v.delay, Millis{53000});
  EXPECT_EQ(v.server_wait, Millis{53000});
  EXPECT_EQ(v.server_wait_header, "RetryInfo");
}

TEST(GoogleStatus, PerDayQuotaIsPermanent) {
  const Verdict v =
      decide_at(kBuiltin, response(429, gemini_quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "3s")));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent-code:RESOURCE_EXHAUSTED");
  EXPECT_EQ(v.what, "HTTP 429 status RESOURCE_EXHAUSTED per day or longer (permanent)");
}

TEST(GoogleStatus, ExhaustedWithoutQuotaDetailsIsLeftToTheGenericSteps) {
  EXPECT_FALSE(google_status(R"({"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"busy"}})"));
  const Verdict v =
      decide_at(kBuiltin, response(429, R"({"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"busy"}})"));
  EXPECT_EQ(reason_text(v), "status:429");
}

TEST(GoogleStatus, RequestShapeAndCredentialStatusesArePermanent) {
  for (const char* status :
       {"INVALID_ARGUMENT", "FAILED_PRECONDITION", "PERMISSION_DENIED", "UNAUTHENTICATED", "NOT_FOUND"}) {
    // A 503 code beside it does not make the request's own fault transient.
    const std::string body = std::string(R"({"error":{"code":400,"message":"try again","status":")") + status + "\"}}";
    const Verdict v = decide_at(kBuiltin, response(400, body));
    EXPECT_EQ(v.action, Action::give_up) << status;
    EXPECT_EQ(reason_text(v), std::string("permanent-code:") + status);
  }
}

TEST(GoogleStatus, UserCodeTablesStillComeFirst) {
  Policy p = kBuiltin;
  p.codes.push_back(CodeTable{"error.status", {}, {"UNAVAILABLE"}});
  EXPECT_EQ(reason_text(decide_at(p, response(503, kGeminiOverloaded))), "permanent-code:UNAVAILABLE");
}

TEST(GoogleStatus, OtherBodiesAreNotGoogles) {
  EXPECT_FALSE(google_status(R"({"error":{"type":"overloaded_error"}})"));
  EXPECT_FALSE(google_status(R"({"status":"UNAVAILABLE"})"));
  EXPECT_FALSE(google_status(R"({"error":{"status":"SOMETHING_ELSE"}})"));
}

TEST(GoogleStream, InBandUnavailableRetriesByItsStatus) {
  // Gemini's streamGenerateContent?alt=sse error before any candidate.
  const Verdict v = decide_at(kBuiltin, stream_error("message", kGeminiOverloaded));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "stream-error:UNAVAILABLE");
  EXPECT_EQ(v.what, "HTTP 200 + stream error UNAVAILABLE");
}

TEST(GoogleStream, InBandPerDayQuotaIsPermanentAndPerMinuteWaitsRetryDelay) {
  Verdict v = decide_at(kBuiltin, stream_error("message", gemini_quota("GenerateRequestsPerDayPerProjectPerModel", "9s")));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent-code:RESOURCE_EXHAUSTED");
  EXPECT_EQ(v.what, "HTTP 200 + stream error RESOURCE_EXHAUSTED per day or longer (permanent)");
  v = decide_at(kBuiltin, stream_error("message", gemini_quota("GenerateContentInputTokensPerModelPerMinute", "2.5s")));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{2500});
  EXPECT_EQ(v.server_wait_header, "RetryInfo");
}

TEST(GoogleRetryDelay, DurationForms) {
  auto at = [](const char* d) { return google_retry_delay(std::string(R"({"retryDelay":")") + d + "\"}"); };
  EXPECT_EQ(at("40s"), Millis{40000});
  EXPECT_EQ(at("1.5s"), Millis{1500});
  EXPECT_EQ(at("0.25s"), Millis{250});
  EXPECT_EQ(at("0.000340s"), Millis{1});  // a wait the server asked for is never rounded to none
  EXPECT_EQ(at("0s"), Millis{0});
  for (const char* bad : {"", "s", "40", "4 0s", "-1s", "1.s", ".5s", "1e3s", "99999999999999999999s"}) {
    EXPECT_FALSE(at(bad)) << bad;
  }
}

TEST(GoogleRetryDelay, TooLongMeansGiveUpNow) {
  const Verdict v =
      decide_at(kBuiltin, response(429, gemini_quota("GenerateRequestsPerMinutePerProjectPerModel", "600s")));
  EXPECT_EQ(reason_text(v), "retry-after-too-long");
  EXPECT_EQ(v.server_wait, Millis{600000});
}

TEST(OpenAiResponses, FailedAndErrorEventsWithServerErrorRetry) {
  Verdict v = decide_at(
      kBuiltin,
      stream_error("response.failed",
                   R"({"type":"response.failed","sequence_number":2,"response":{"id":"resp_1","status":"failed",)"
                   R"("error":{"code":"server_error","message":"An error occurred while processing your request."}}})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "stream-error:server_error");
  v = decide_at(kBuiltin, stream_error("error", R"({"type":"error","code":"rate_limit_exceeded","message":"Rate limit)"
                                                R"( reached","param":null,"sequence_number":1})"));
  EXPECT_EQ(reason_text(v), "stream-error:rate_limit_exceeded");
  v = decide_at(kBuiltin, stream_error("response.failed",
                                       R"({"type":"response.failed","response":{"status":"failed","error":)"
                                       R"({"code":"insufficient_quota","message":"You exceeded your quota"}}})"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent:insufficient_quota");
}

}  // namespace
}  // namespace curlretry::core
