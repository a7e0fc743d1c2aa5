// Which clause of DESIGN §3.3 decides, and that the first match wins.
#include <gtest/gtest.h>

#include "decide_test_support.h"

namespace curlretry::core {
namespace {

using testing::decide_at;
using testing::kBuiltin;
using testing::failure;
using testing::response;

Policy with_zai_codes() {
  Policy p = Policy::builtin();
  p.codes.push_back(CodeTable{"error.code", {"1302", "1305"}, {"1113", "1304", "1308", "1309", "1310"}});
  return p;
}

// --- the seeds' own examples ---

TEST(DecideSeeds, Http429WithDailyQuotaGivesUp) {
  const Verdict v = decide_at(kBuiltin, response(429, R"({"error":{"message":"You exceeded your daily quota"}})"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent:daily quota");
  EXPECT_EQ(v.what, "HTTP 429 daily quota (permanent)");
  EXPECT_EQ(v.delay, Millis{0});
}

TEST(DecideSeeds, Http400CaptchaVerifyFailedRetriesAfter1500) {
  const Verdict v = decide_at(kBuiltin, response(400, R"({"code":3007,"msg":"captcha verify failed"})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{1500});
  EXPECT_EQ(reason_text(v), "marker:captcha");
  EXPECT_EQ(v.what, "HTTP 400 captcha (risk-control)");
}

TEST(DecideSeeds, PlainHttp400GivesUp) {
  const Verdict v = decide_at(kBuiltin, response(400, R"({"error":"missing field model"})"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "not-retryable");
  EXPECT_EQ(v.what, "HTTP 400");
}

TEST(DecideSeeds, Http503SecondAttemptWaits3000) {
  const Verdict v = decide_at(kBuiltin, response(503, "", 2));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{3000});
  EXPECT_EQ(reason_text(v), "status:503");
  EXPECT_EQ(v.what, "HTTP 503");
}

TEST(DecideSeeds, ZaiConcurrencyCode1302Retries) {
  const Verdict v = decide_at(with_zai_codes(), response(429, R"({"error":{"code":"1302","message":"并发数过高"}})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "code:1302");
  EXPECT_EQ(v.what, "HTTP 429 code 1302");
  EXPECT_EQ(v.delay, Millis{1500});
}

// --- every retry status of the built-in set ---

TEST(DecideStatus, EveryBuiltinRetryStatusRetries) {
  for (int status : {408, 429, 500, 502, 503, 504, 529}) {
    const Verdict v = decide_at(kBuiltin, response(status));
    EXPECT_EQ(v.action, Action::retry) << status;
    EXPECT_EQ(reason_text(v), "status:" + std::to_string(status));
  }
}

TEST(DecideStatus, OtherErrorsGiveUp) {
  for (int status : {401, 403, 404, 413, 422, 501, 505}) {
    const Verdict v = decide_at(kBuiltin, response(status));
    EXPECT_EQ(v.action, Action::give_up) << status;
    EXPECT_EQ(reason_text(v), "not-retryable");
  }
}

TEST(DecideStatus, SuccessAndRedirectAreDelivered) {
  for (int status : {200, 201, 204, 301, 304}) {
    const Verdict v = decide_at(kBuiltin, response(status));
    EXPECT_EQ(v.action, Action::give_up);
    EXPECT_EQ(reason_text(v), "success");
    EXPECT_EQ(v.what, "HTTP " + std::to_string(status));
  }
}

// --- order: committed, host abort, success, replayable, limits ---

TEST(DecideOrder, CommittedBeatsEverything) {
  Outcome o = response(503, "captcha", 1);
  o.hints.should_retry = "true";
  o.transport = Transport::reset;
  o.committed = true;
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "committed");
  // `what` still tells what the attempt was, for the log line.
  EXPECT_EQ(v.what, "HTTP 503 then connection reset (x-should-retry: true)");
}

TEST(DecideOrder, CommittedBeatsHostAbort) {
  Outcome o = failure(Transport::host_abort);
  o.committed = true;
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "committed");
}

TEST(DecideOrder, HostAbortIsNeverRetriedEvenIfListed) {
  Policy p = Policy::builtin();
  p.retry_transport.push_back(Transport::host_abort);
  Outcome o = failure(Transport::host_abort);
  o.status = 503;
  o.hints.should_retry = "true";
  const Verdict v = decide_at(p, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "host-abort");
  EXPECT_EQ(v.what, "HTTP 503 then aborted by the host (x-should-retry: true)");
}

TEST(DecideOrder, BadArgumentIsNeverRetriedEvenIfListed) {
  Policy p = Policy::builtin();
  p.retry_transport.push_back(Transport::bad_argument);
  const Verdict v = decide_at(p, failure(Transport::bad_argument));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "bad-argument");
  EXPECT_EQ(v.what, "bad argument");
}

TEST(DecideOrder, SuccessBeatsShouldRetryTrue) {
  Outcome o = response(200);
  o.hints.should_retry = "true";
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "success");
}

TEST(DecideOrder, SuccessBeatsNotReplayable) {
  Outcome o = response(200);
  o.replayable = false;
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "success");
}

TEST(DecideOrder, NotReplayableBeatsRetryStatus) {
  Outcome o = response(503);
  o.replayable = false;
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "not-replayable");
  EXPECT_EQ(v.what, "HTTP 503");
}

TEST(DecideOrder, NotReplayableBeatsExhausted) {
  Outcome o = response(503, "", 3);
  o.replayable = false;
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "not-replayable");
}

TEST(DecideOrder, ExhaustedBeatsShouldRetryTrue) {
  Outcome o = response(503, "", 3);
  o.hints.should_retry = "true";
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "exhausted");
}

TEST(DecideOrder, ExhaustedKeepsWhatTheLastAttemptHit) {
  const Verdict v = decide_at(kBuiltin, response(400, R"({"msg":"captcha verify failed"})", 3));
  EXPECT_EQ(reason_text(v), "exhausted");
  EXPECT_EQ(v.what, "HTTP 400 captcha (risk-control)");
}

TEST(DecideOrder, MaxElapsedReachedBeforeDecidingBeatsShouldRetryTrue) {
  Outcome o = response(503);
  o.hints.should_retry = "true";
  o.elapsed = kBuiltin.max_elapsed;
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "max-elapsed");
}

TEST(DecideOrder, ShouldRetryFalseBeats503) {
  Outcome o = response(503);
  o.hints.should_retry = "false";
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "should-retry:false");
  EXPECT_EQ(v.what, "HTTP 503 (x-should-retry: false)");
}

TEST(DecideOrder, ShouldRetryFalseBeatsRetryCodeAndTransport) {
  Outcome o = response(429, R"({"error":{"code":"1302"}})");
  o.hints.should_retry = "False";
  o.transport = Transport::reset;
  EXPECT_EQ(reason_text(decide_at(with_zai_codes(), o)), "should-retry:false");
}

TEST(DecideOrder, ShouldRetryTrueRetriesAPlain400) {
  Outcome o = response(400);
  o.hints.should_retry = "TRUE";
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "should-retry:true");
  EXPECT_EQ(v.what, "HTTP 400 (x-should-retry: true)");
  EXPECT_EQ(v.delay, Millis{1500});
}

TEST(DecideOrder, ShouldRetryTrueBeatsPermanentMarker) {
  Outcome o = response(429, "daily quota");
  o.hints.should_retry = "true";
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "should-retry:true");
}

TEST(DecideOrder, UnknownShouldRetryValueIsIgnored) {
  Outcome o = response(503);
  o.hints.should_retry = "maybe";
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "status:503");
}

TEST(DecideOrder, PermanentCodeBeatsRetryStatus) {
  const Verdict v = decide_at(with_zai_codes(), response(429, R"({"error":{"code":"1113","message":"余额不足"}})"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent-code:1113");
  EXPECT_EQ(v.what, "HTTP 429 code 1113 (permanent)");
}

TEST(DecideOrder, RetryCodeBeatsPermanentMarker) {
  const Verdict v = decide_at(with_zai_codes(), response(429, R"({"error":{"code":1305,"message":"daily quota"}})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "code:1305");
}

TEST(DecideOrder, PermanentMarkerBeatsRetryStatus) {
  const Verdict v = decide_at(kBuiltin, response(503, "Please check your BILLING details"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent:billing");
  EXPECT_EQ(v.what, "HTTP 503 billing (permanent)");
}

TEST(DecideOrder, PermanentMarkerBeatsRetryMarker) {
  const Verdict v = decide_at(kBuiltin, response(400, "too many requests per day"));
  EXPECT_EQ(reason_text(v), "permanent:per day");
}

TEST(DecideOrder, RetryStatusBeatsRetryMarker) {
  const Verdict v = decide_at(kBuiltin, response(429, "rate limit"));
  EXPECT_EQ(reason_text(v), "status:429");
  EXPECT_EQ(v.what, "HTTP 429");
}

TEST(DecideOrder, RetryStatusBeatsTransport) {
  Outcome o = response(502);
  o.transport = Transport::recv;
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(reason_text(v), "status:502");
  EXPECT_EQ(v.what, "HTTP 502 then receive error");
}

// --- JSON code tables ---

TEST(DecideCodes, NumericAndStringCodesAreTheSame) {
  EXPECT_EQ(reason_text(decide_at(with_zai_codes(), response(429, R"({"error":{"code":1302}})"))), "code:1302");
  EXPECT_EQ(reason_text(decide_at(with_zai_codes(), response(429, R"({"error":{"code":"1302"}})"))), "code:1302");
}

TEST(DecideCodes, RetryCodeRetriesOutsideTheRetryStatusSet) {
  const Verdict v = decide_at(with_zai_codes(), response(400, R"({"error":{"code":"1305"}})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "code:1305");
  EXPECT_EQ(v.what, "HTTP 400 code 1305");
}

TEST(DecideCodes, UnlistedCodeFallsThroughToLaterClauses) {
  EXPECT_EQ(reason_text(decide_at(with_zai_codes(), response(429, R"({"error":{"code":"9999"}})"))), "status:429");
  EXPECT_EQ(reason_text(decide_at(with_zai_codes(), response(400, R"({"error":{"code":"9999"}})"))), "not-retryable");
}

TEST(DecideCodes, FirstTableWithAListedValueDecides) {
  Policy p = Policy::builtin();
  p.codes.push_back(CodeTable{"code", {"1"}, {"2"}});           // yields 3007: not listed
  p.codes.push_back(CodeTable{"error.type", {}, {"insufficient_quota"}});
  p.codes.push_back(CodeTable{"code", {"3007"}, {}});           // would retry, but comes later
  const Verdict v = decide_at(p, response(429, R"({"code":3007,"error":{"type":"insufficient_quota"}})"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent-code:insufficient_quota");
}

TEST(DecideCodes, ValueListedAsBothIsPermanent) {
  Policy p = Policy::builtin();
  p.codes.push_back(CodeTable{"code", {"7"}, {"7"}});
  EXPECT_EQ(reason_text(decide_at(p, response(503, R"({"code":7})"))), "permanent-code:7");
}

TEST(DecideCodes, CodeBeyondTheBodyWindowIsNotSeen) {
  Policy p = with_zai_codes();
  p.body_window = 16;
  EXPECT_EQ(reason_text(decide_at(p, response(400, R"({"error":{"code":"1305"}})"))), "not-retryable");
}

TEST(DecideCodes, SuccessBodyIsNeverScanned) {
  Policy p = with_zai_codes();
  Outcome o = response(200, R"({"error":{"code":"1302"}})");
  o.transport = Transport::timeout;  // not a retryable transport
  EXPECT_EQ(reason_text(decide_at(p, o)), "not-retryable");
}

// --- body markers ---

TEST(DecideMarkers, EveryBuiltinRiskControlMarkerRetriesA4xx) {
  for (const std::string marker : {"captcha", "verify failed", "risk control", "风控", "rate limit",
                                   "too many requests", "try again"}) {
    const Verdict v = decide_at(kBuiltin, response(403, "blocked: " + marker + "!"));
    EXPECT_EQ(v.action, Action::retry) << marker;
    EXPECT_EQ(reason_text(v), "marker:" + marker);
    EXPECT_EQ(v.what, "HTTP 403 " + marker + " (risk-control)");
  }
}

TEST(DecideMarkers, EveryBuiltinPermanentMarkerGivesUpEvenOn429) {
  for (const std::string marker : {"per day", "daily quota", "monthly", "billing", "upgrade your plan",
                                   "insufficient_quota", "context length", "prompt too long", "usage_limit_reached"}) {
    const Verdict v = decide_at(kBuiltin, response(429, "error: " + marker));
    EXPECT_EQ(v.action, Action::give_up) << marker;
    EXPECT_EQ(reason_text(v), "permanent:" + marker);
  }
}

TEST(DecideMarkers, MarkersMatchIgnoringCase) {
  EXPECT_EQ(reason_text(decide_at(kBuiltin, response(400, "CAPTCHA REQUIRED"))), "marker:captcha");
  EXPECT_EQ(reason_text(decide_at(kBuiltin, response(429, "Daily Quota exceeded"))), "permanent:daily quota");
}

TEST(DecideMarkers, Utf8RiskControlMarker) {
  const Verdict v = decide_at(kBuiltin, response(412, R"({"code":-352,"message":"触发风控"})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "marker:风控");
  EXPECT_EQ(v.what, "HTTP 412 风控 (risk-control)");
}

TEST(DecideMarkers, RetryMarkerOnlyCountsOn4xx) {
  Policy p = Policy::builtin();
  p.retry_status.clear();
  EXPECT_EQ(reason_text(decide_at(p, response(500, "please try again"))), "not-retryable");
  EXPECT_EQ(reason_text(decide_at(p, response(418, "please try again"))), "marker:try again");
}

TEST(DecideMarkers, MarkerBeyondTheBodyWindowIsNotSeen) {
  const std::string body = std::string(4096, 'x') + "captcha";
  EXPECT_EQ(reason_text(decide_at(kBuiltin, response(400, body))), "not-retryable");
  // Straddling the window edge: only part of the marker is inside.
  const std::string straddling = std::string(4093, 'x') + "captcha";
  EXPECT_EQ(reason_text(decide_at(kBuiltin, response(400, straddling))), "not-retryable");
  const std::string inside = std::string(4089, 'x') + "captcha";
  EXPECT_EQ(reason_text(decide_at(kBuiltin, response(400, inside))), "marker:captcha");
}

TEST(DecideMarkers, WhatNeverCarriesMoreOfTheBodyThanTheMarker) {
  const Verdict v = decide_at(kBuiltin, response(400, R"({"key":"sk-SECRET","msg":"Captcha Verify Failed"})"));
  EXPECT_EQ(v.what, "HTTP 400 captcha (risk-control)");
  EXPECT_EQ(reason_text(v), "marker:captcha");
}

// --- transport errors ---

TEST(DecideTransport, EveryBuiltinRetryableTransportRetries) {
  const std::pair<Transport, std::string> cases[] = {
      {Transport::connect_refused, "connection refused"}, {Transport::reset, "connection reset"},
      {Transport::send, "send error"},                    {Transport::recv, "receive error"},
      {Transport::empty_reply, "empty reply"},            {Transport::tls_handshake, "TLS handshake failed"},
      {Transport::http2_stream, "HTTP/2 stream error"},
  };
  for (const auto& [transport, what] : cases) {
    const Verdict v = decide_at(kBuiltin, failure(transport));
    EXPECT_EQ(v.action, Action::retry) << what;
    EXPECT_EQ(reason_text(v), "transport:" + std::string(to_string(transport)));
    EXPECT_EQ(v.what, what);
    EXPECT_EQ(v.delay, Millis{1500});
  }
}

TEST(DecideTransport, TimeoutIsNotRetriedByDefault) {
  const Verdict v = decide_at(kBuiltin, failure(Transport::timeout));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "not-retryable");
  EXPECT_EQ(v.what, "timeout");
}

TEST(DecideTransport, TimeoutIsRetriedWhereConfigured) {
  Policy p = Policy::builtin();
  p.retry_transport.push_back(Transport::timeout);
  const Verdict v = decide_at(p, failure(Transport::timeout));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "transport:timeout");
}

TEST(DecideTransport, OtherErrorGivesUp) {
  const Verdict v = decide_at(kBuiltin, failure(Transport::other));
  EXPECT_EQ(reason_text(v), "not-retryable");
  EXPECT_EQ(v.what, "transfer failed");
}

TEST(DecideTransport, SuccessStatusCutByTransportErrorIsRetried) {
  Outcome o = response(200, "monthly billing report");  // content, not an error message
  o.transport = Transport::recv;
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "transport:recv");
  EXPECT_EQ(v.what, "HTTP 200 then receive error");
}

TEST(DecideTransport, NoStatusAndNoErrorIsDescribedAsNoResponse) {
  const Verdict v = decide_at(kBuiltin, response(0));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "not-retryable");
  EXPECT_EQ(v.what, "no response");
}

}  // namespace
}  // namespace curlretry::core
