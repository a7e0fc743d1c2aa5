// The two readers of a response's hints (docs/DESIGN.md, "Response hints"): the header
// callback's ResponseHead::note_line and the libcurl lookups of shim/header_lookup.h, both
// feeding core::ResponseHints. The lookups go to a fake curl_easy_header that counts them.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/ascii.h"
#include "shim/header_lookup.h"
#include "shim/real_curl.h"
#include "shim/response_head.h"
#include "shim/stream_hold.h"

namespace curlretry::shim {
namespace {

ResponseHead read(const std::vector<std::string>& lines) {
  ResponseHead head;
  for (const auto& line : lines) head.note_line(line);
  return head;
}

TEST(ResponseHead, TakesTheDecisionsHintsFromHeaderLines) {
  const ResponseHead h = read({"HTTP/1.1 503 Busy\r\n", "Retry-After:  7 \r\n", "retry-after-ms:250\r\n",
                               "X-Should-Retry: true\r\n", "\r\n"});
  EXPECT_EQ(h.status, 503);
  EXPECT_EQ(h.hints.retry_after, "7");
  EXPECT_EQ(h.hints.retry_after_ms, "250");
  EXPECT_EQ(h.hints.should_retry, "true");
}

TEST(ResponseHead, TheFirstOfARepeatedHintCounts) {
  const ResponseHead h =
      read({"HTTP/1.1 503 Busy\r\n", "Retry-After: 0\r\n", "Retry-After: Thu, 15 Jan 2026 13:00:00 GMT\r\n"});
  EXPECT_EQ(h.hints.retry_after, "0");
}

TEST(ResponseHead, ANameWithASpaceBeforeItsColonIsNoHint) {
  const ResponseHead h = read({"HTTP/1.1 503 Busy\r\n", "Retry-After : 7\r\n", "Retry-After-Msx: 1\r\n"});
  EXPECT_FALSE(h.hints.retry_after || h.hints.retry_after_ms);
}

TEST(ResponseHead, ResetHeadersAreKeptOnlyForAStatusThatCoolsTheFleet) {
  const std::vector<std::string> resets{"anthropic-ratelimit-requests-reset: 2026-01-15T12:00:20Z\r\n",
                                        "x-ratelimit-reset-requests: 6m0s\r\n"};
  std::vector<std::string> ok{"HTTP/1.1 200 OK\r\n"};
  ok.insert(ok.end(), resets.begin(), resets.end());
  const ResponseHead success = read(ok);
  EXPECT_FALSE(success.hints.requests_reset || success.hints.reset_requests);
  std::vector<std::string> limited{"HTTP/2 429 \r\n"};
  limited.insert(limited.end(), resets.begin(), resets.end());
  const ResponseHead h = read(limited);
  EXPECT_EQ(h.hints.requests_reset, "2026-01-15T12:00:20Z");
  EXPECT_EQ(h.hints.reset_requests, "6m0s");
}

TEST(ResponseHead, AStatusLineStartsANewResponse) {
  // A redirect's (or a 1xx's) hints do not leak into the response that follows.
  const ResponseHead h = read({"HTTP/1.1 503 Busy\r\n", "Retry-After: 9\r\n", "\r\n", "HTTP/1.1 429 Slow\r\n",
                               "x-should-retry: false\r\n"});
  EXPECT_EQ(h.status, 429);
  EXPECT_FALSE(h.hints.retry_after);
  EXPECT_EQ(h.hints.should_retry, "false");
}

TEST(ResponseHead, ClearLeavesAFreshHead) {
  // The next attempt's head starts from nothing: every hint and flag of the last one goes.
  ResponseHead h = read({"HTTP/1.1 429 Slow\r\n", "Retry-After: 9\r\n", "retry-after-ms: 5\r\n",
                         "x-should-retry: true\r\n", "anthropic-ratelimit-requests-reset: 2026-01-01T00:00:00Z\r\n",
                         "x-ratelimit-reset-requests: 1s\r\n", "Content-Length: 0\r\n", "Location: ftp://x/\r\n"});
  h.candidate = true;
  ASSERT_TRUE(h.hints.retry_after && h.hints.retry_after_ms && h.hints.should_retry && h.hints.requests_reset &&
              h.hints.reset_requests && h.no_body);
  h.clear();
  EXPECT_EQ(h.status, 0);
  EXPECT_FALSE(h.hints.retry_after || h.hints.retry_after_ms || h.hints.should_retry || h.hints.requests_reset ||
               h.hints.reset_requests);
  EXPECT_FALSE(h.candidate || h.no_body || h.location_not_http);
}

TEST(StreamHold, TellsAnEventStreamByItsContentType) {
  for (const char* yes : {"text/event-stream", "Text/Event-Stream", "  text/event-stream", "\ttext/event-stream",
                          "text/event-stream; charset=utf-8", "text/event-stream;charset=utf-8", "text/event-stream "}) {
    EXPECT_TRUE(is_event_stream(yes)) << yes;
  }
  for (const char* no : {"", "text/plain", "text/event", "text/event-streams", "text/event-stream2",
                         "application/json", "x text/event-stream", "text/event-stream,"}) {
    EXPECT_FALSE(is_event_stream(no)) << no;
  }
  EXPECT_FALSE(is_event_stream(nullptr));
}

// --- the libcurl lookups -------------------------------------------------------------------------

struct Store {
  std::multimap<std::string, std::string> headers;  // lower-case name -> value, in arrival order
  std::vector<std::string> asked;
  struct curl_header answer {};
} g_store;

CURLHcode fake_header(CURL*, const char* name, size_t index, unsigned int origin, int request,
                      struct curl_header** out) {
  g_store.asked.emplace_back(name);
  EXPECT_EQ(origin, static_cast<unsigned>(CURLH_HEADER));
  EXPECT_EQ(request, -1);
  auto [first, last] = g_store.headers.equal_range(core::ascii::lower(name));
  for (size_t i = 0; first != last; ++first, ++i) {
    if (i != index) continue;
    g_store.answer.value = first->second.data();
    *out = &g_store.answer;
    return CURLHE_OK;
  }
  return CURLHE_MISSING;
}

class HeaderLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    g_store = Store{};
    api_.easy_header = &fake_header;
  }
  real::Api api_;
  int handle_ = 0;
  CURL* easy_ = reinterpret_cast<CURL*>(&handle_);
};

TEST_F(HeaderLookup, ASuccessLooksUpOnlyTheDecisionsHints) {
  g_store.headers = {{"x-should-retry", "true"}, {"anthropic-ratelimit-requests-reset", "2026-01-15T12:00:20Z"}};
  core::ResponseHints hints;
  learn_hints(api_, easy_, 200, hints);
  EXPECT_EQ(g_store.asked, (std::vector<std::string>{"retry-after", "retry-after-ms", "x-should-retry"}));
  EXPECT_EQ(hints.should_retry, "true");
  EXPECT_FALSE(hints.requests_reset);
}

TEST_F(HeaderLookup, ACoolingStatusAlsoLooksUpTheResetHeaders) {
  g_store.headers = {{"retry-after", "3"},
                     {"retry-after", "4"},
                     {"x-ratelimit-reset-requests", "1s"},
                     {"anthropic-ratelimit-requests-reset", "2026-01-15T12:00:20Z"}};
  core::ResponseHints hints;
  learn_hints(api_, easy_, 429, hints);
  EXPECT_EQ(g_store.asked.size(), core::kHintHeaders.size());
  EXPECT_EQ(hints.retry_after, "3");  // index 0: the first of a repeated header
  EXPECT_FALSE(hints.retry_after_ms);
  EXPECT_EQ(hints.reset_requests, "1s");
  EXPECT_EQ(hints.requests_reset, "2026-01-15T12:00:20Z");
}

TEST_F(HeaderLookup, WithoutCurlEasyHeaderNothingIsLearned) {
  api_.easy_header = nullptr;
  core::ResponseHints hints;
  learn_hints(api_, easy_, 503, hints);
  EXPECT_FALSE(hints.retry_after || hints.retry_after_ms || hints.should_retry);
  EXPECT_EQ(libcurl_header(api_, easy_, "retry-after"), std::nullopt);
}

}  // namespace
}  // namespace curlretry::shim
