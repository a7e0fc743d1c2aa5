// Which events of a 2xx stream are setup, content or an error, and how an error event before
// content is decided.
#include <gtest/gtest.h>

#include "core/stream_events.h"
#include "decide_test_support.h"

namespace curlretry::core {
namespace {

using testing::decide_at;
using testing::kBuiltin;
using testing::stream_error;

SseBlock event(std::string type, std::string data) {
  SseBlock b;
  b.type = std::move(type);
  b.data = std::move(data);
  b.dispatched = true;
  return b;
}

const StreamRules kRules = Policy::builtin().stream;

EventRole role(const SseBlock& b) { return event_role(kRules, b); }

constexpr const char* kAnthropicOverloaded =
    R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";

TEST(StreamRulesBuiltin, HoldsUpTo64KiBAndKnowsTheProvidersSetupEvents) {
  EXPECT_TRUE(kRules.hold);
  EXPECT_EQ(kRules.hold_max_bytes, 65536u);
  EXPECT_TRUE(kRules.content_events.empty());
  EXPECT_EQ(kRules.setup_events,
            (std::vector<std::string>{"message_start", "ping", "response.created", "response.in_progress"}));
}

TEST(EventRole, AnthropicSetupEvents) {
  EXPECT_EQ(role(event("message_start", R"({"type":"message_start","message":{"id":"m"}})")), EventRole::setup);
  EXPECT_EQ(role(event("ping", R"({"type": "ping"})")), EventRole::setup);
}

TEST(EventRole, AnthropicContentEvents) {
  EXPECT_EQ(role(event("content_block_start", R"({"type":"content_block_start","index":0})")), EventRole::content);
  EXPECT_EQ(role(event("content_block_delta", R"({"delta":{"type":"text_delta","text":"Hi"}})")),
            EventRole::content);
}

TEST(EventRole, CommentsRetryAndIdBlocksAreSetup) {
  SseBlock comment;
  comment.comment = true;
  EXPECT_EQ(role(comment), EventRole::setup);
  SseBlock retry;
  retry.retry = 3000;
  EXPECT_EQ(role(retry), EventRole::setup);
}

TEST(EventRole, ErrorEvents) {
  EXPECT_EQ(role(event("error", kAnthropicOverloaded)), EventRole::error);
  EXPECT_EQ(role(event("response.failed", R"({"type":"response.failed","response":{"error":{"code":"x"}}})")),
            EventRole::error);
  EXPECT_EQ(
      role(event("message", R"({"error":{"message":"busy","type":"server_error","code":"server_is_overloaded"}})")),
      EventRole::error);
  EXPECT_EQ(role(event("message", R"({"type":"error","code":"rate_limit_exceeded"})")), EventRole::error);
}

TEST(EventRole, ErrorNullIsNotAnError) {
  EXPECT_EQ(role(event("response.completed", R"({"response":{"error":null}})")), EventRole::content);
  EXPECT_EQ(role(event("message", R"({"error":null,"choices":[{"delta":{"content":"x"}}]})")), EventRole::content);
}

TEST(EventRole, OpenAiResponsesSetupEvents) {
  EXPECT_EQ(role(event("response.created", R"({"type":"response.created","response":{"error":null}})")),
            EventRole::setup);
  EXPECT_EQ(role(event("response.in_progress", R"({"type":"response.in_progress"})")), EventRole::setup);
  EXPECT_EQ(role(event("response.output_text.delta", R"({"delta":"Hi"})")), EventRole::content);
}

TEST(EventRole, ChatChunkWithOnlyTheRoleIsSetup) {
  EXPECT_EQ(role(event("message", R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,)"
                                  R"("delta":{"role":"assistant","content":"","refusal":null},)"
                                  R"("finish_reason":null}]})")),
            EventRole::setup);
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta": { "role" : "assistant" }}]})")), EventRole::setup);
}

TEST(EventRole, ChatChunkWithoutChoicesYetIsSetup) {
  EXPECT_EQ(
      role(event("message", R"({"choices":[],"created":0,"id":"","prompt_filter_results":[{"prompt_index":0}]})")),
      EventRole::setup);
  EXPECT_EQ(role(event("message", R"({"choices" : [ ] })")), EventRole::setup);
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta":{"content":"x"}}]})")), EventRole::content);
}

TEST(EventRole, ChatChunkWithContentIsContent) {
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta":{"role":"assistant","content":"Hi"}}]})")),
            EventRole::content);
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta":{"content":""}}]})")), EventRole::content);  // no role
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta":{"role":"assistant","tool_calls":[{"id":"t"}]}}]})")),
            EventRole::content);
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta":{"role":"assistant","content":"}"}}]})")),
            EventRole::content);
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta":{"role":"assistant","content":"\"}"}}]})")),
            EventRole::content);
  EXPECT_EQ(role(event("message", R"({"choices":[{"delta":{"role":"assistant")")), EventRole::content);  // cut
  EXPECT_EQ(role(event("message", "[DONE]")), EventRole::content);
}

TEST(EventRole, ConfiguredLists) {
  StreamRules rules = kRules;
  rules.setup_events.push_back("meta");
  EXPECT_EQ(event_role(rules, event("meta", "{}")), EventRole::setup);
  rules.content_events = {"content_block_delta"};
  // With a content list, only its events commit; others are held like setup.
  EXPECT_EQ(event_role(rules, event("content_block_start", "{}")), EventRole::setup);
  EXPECT_EQ(event_role(rules, event("content_block_delta", "{}")), EventRole::content);
  // The content list wins over the setup list and the role-only rule.
  rules.content_events = {"ping", "message"};
  EXPECT_EQ(event_role(rules, event("ping", "{}")), EventRole::content);
  EXPECT_EQ(event_role(rules, event("message", R"({"choices":[{"delta":{"role":"assistant"}}]})")),
            EventRole::content);
  // An error stays an error whatever the lists say.
  EXPECT_EQ(event_role(rules, event("error", kAnthropicOverloaded)), EventRole::error);
}

TEST(StreamErrorName, PrefersTheNameTheTableKnows) {
  EXPECT_EQ(stream_error_name("error", kAnthropicOverloaded), "overloaded_error");
  EXPECT_EQ(stream_error_name("message", R"({"error":{"type":"server_error","code":"server_is_overloaded"}})"),
            "server_is_overloaded");
  EXPECT_EQ(stream_error_name("response.failed",
                              R"({"type":"response.failed","response":{"error":{"code":"server_is_overloaded"}}})"),
            "server_is_overloaded");
  EXPECT_EQ(stream_error_name("error", R"({"type":"error","error":{"type":"weird_error"}})"), "weird_error");
  EXPECT_EQ(stream_error_name("error", "not json"), "error");
}


TEST(DecideStreamError, AnthropicOverloadedRetries) {
  const Verdict v = decide_at(kBuiltin, stream_error("error", kAnthropicOverloaded));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{1500});
  EXPECT_EQ(reason_text(v), "stream-error:overloaded_error");
  EXPECT_EQ(v.what, "HTTP 200 + stream error overloaded_error");
}

TEST(DecideStreamError, BuiltinTransientTable) {
  for (const char* name : {"overloaded_error", "rate_limit_error", "api_error", "server_is_overloaded",
                           "rate_limit_exceeded"}) {
    const std::string data = std::string(R"({"type":"error","error":{"type":")") + name + R"("}})";
    const Verdict v = decide_at(kBuiltin, stream_error("error", data));
    EXPECT_EQ(v.action, Action::retry) << name;
    EXPECT_EQ(reason_text(v), std::string("stream-error:") + name);
  }
}

TEST(DecideStreamError, BuiltinPermanentTable) {
  for (const char* name : {"invalid_request_error", "authentication_error", "permission_error", "insufficient_quota",
                           "billing_hard_limit_reached", "context_length_exceeded"}) {
    const std::string data = std::string(R"({"error":{"code":")") + name + R"(","message":"Overloaded"}})";
    const Verdict v = decide_at(kBuiltin, stream_error("message", data));
    EXPECT_EQ(v.action, Action::give_up) << name;
    EXPECT_EQ(v.reason, Reason::permanent) << name << " " << reason_text(v);
    EXPECT_TRUE(v.what.starts_with(std::string("HTTP 200 + stream error ") + name)) << v.what;
  }
}

TEST(DecideStreamError, PermanentTypeNamesItself) {
  const Verdict v =
      decide_at(kBuiltin, stream_error("error", R"({"type":"error","error":{"type":"authentication_error"}})"));
  EXPECT_EQ(reason_text(v), "permanent:authentication_error");
  EXPECT_EQ(v.what, "HTTP 200 + stream error authentication_error (permanent)");
}

TEST(DecideStreamError, PermanentMarkerBeatsTransientType) {
  const Verdict v = decide_at(
      kBuiltin, stream_error("error", R"({"error":{"type":"rate_limit_error","message":"daily quota used up"}})"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent:daily quota");
  EXPECT_EQ(v.what, "HTTP 200 + stream error rate_limit_error daily quota (permanent)");
}

TEST(DecideStreamError, CodeTablesComeFirst) {
  Policy p = kBuiltin;
  p.codes.push_back(CodeTable{"error.type", {"custom_busy"}, {"overloaded_error"}});
  Verdict v = decide_at(p, stream_error("error", kAnthropicOverloaded));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "permanent-code:overloaded_error");
  v = decide_at(p, stream_error("error", R"({"error":{"type":"custom_busy"}})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "code:custom_busy");
  EXPECT_EQ(v.what, "HTTP 200 + stream error custom_busy code custom_busy");
}

TEST(DecideStreamError, RetryMarkersForUnknownTypes) {
  const Verdict v =
      decide_at(kBuiltin, stream_error("error", R"({"error":{"type":"x","message":"please try again"}})"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(reason_text(v), "marker:try again");
}

TEST(DecideStreamError, UnknownErrorGivesUp) {
  const Verdict v = decide_at(kBuiltin, stream_error("error", R"({"error":{"type":"mystery"}})"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "not-retryable");
  EXPECT_EQ(v.what, "HTTP 200 + stream error mystery");
}

TEST(DecideStreamError, LimitsStillApply) {
  const Verdict v = decide_at(kBuiltin, stream_error("error", kAnthropicOverloaded, 3));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "exhausted");
  EXPECT_EQ(v.what, "HTTP 200 + stream error overloaded_error");
}

TEST(DecideStreamError, WithoutStreamErrorA200IsSuccess) {
  Outcome o;
  o.status = 200;
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "success");
}

TEST(ScanStream, FindsTheDecidingEvent) {
  const std::string setup = "event: message_start\ndata: {}\n\n: c\n\nevent: ping\ndata: {}\n\n";
  StreamScan s = scan_stream(kRules, setup + "event: error\ndata: " + kAnthropicOverloaded + "\n\n");
  EXPECT_EQ(s.kind, StreamScan::Kind::error);
  EXPECT_EQ(s.event, 3u);
  EXPECT_EQ(s.type, "error");
  EXPECT_EQ(s.data, kAnthropicOverloaded);
  s = scan_stream(kRules, setup + "event: content_block_start\ndata: {}\n\nevent: error\ndata: {}\n\n");
  EXPECT_EQ(s.kind, StreamScan::Kind::content);
  EXPECT_EQ(s.type, "content_block_start");
  EXPECT_EQ(s.end, setup.size() + 37);  // "event: content_block_start\n" 27, "data: {}\n" 9, "\n"
  s = scan_stream(kRules, setup);
  EXPECT_EQ(s.kind, StreamScan::Kind::end);
  EXPECT_EQ(s.end, setup.size());
}

TEST(ScanStream, HoldLimit) {
  StreamRules rules = kRules;
  rules.hold_max_bytes = 40;
  StreamScan s = scan_stream(rules, "event: ping\ndata: {}\n\nevent: ping\ndata: {}\n\nevent: error\ndata: {}\n\n");
  EXPECT_EQ(s.kind, StreamScan::Kind::limit);
  EXPECT_EQ(s.end, 40u);
  s = scan_stream(rules, "event: ping\ndata: 0123456789012345678901234567890123456789");  // unfinished, too long
  EXPECT_EQ(s.kind, StreamScan::Kind::limit);
}

}  // namespace
}  // namespace curlretry::core
