#include "shim/stream_hold.h"

#include <utility>

#include "core/ascii.h"
#include "core/stream_events.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/transfer.h"

namespace curlretry::shim {

namespace {

constexpr std::string_view kEventStream = "text/event-stream";

// One byte of kEventStream at `i`, any case: a letter's case bit is ignored (exact for letters),
// the other bytes compared as they are.
constexpr bool byte_matches(char c, std::size_t i) {
  const char expected = kEventStream[i];
  return expected >= 'a' && expected <= 'z' ? (c | 0x20) == expected : c == expected;
}

// The bytes compared in order, unrolled: a byte is read only after every one before it matched
// (so none past the value's NUL).
template <std::size_t... I>
bool starts_with_event_stream(const char* p, std::index_sequence<I...>) {
  return (byte_matches(p[I], I) && ...);
}

}  // namespace

// Inline into Transfer::stream_wanted (the success path's one caller), public for the tests.
[[gnu::always_inline]] inline bool event_stream_type(const char* content_type) {
  if (content_type == nullptr) return false;
  // Asked of every 2xx: no strlen of the whole value, and "text/html" or "application/json" is
  // told apart in a few bytes (issue 27).
  const char* p = content_type;
  while (*p == ' ' || *p == '\t') ++p;
  if (!starts_with_event_stream(p, std::make_index_sequence<kEventStream.size()>{})) return false;
  p += kEventStream.size();
  return *p == '\0' || *p == ';' || *p == ' ' || *p == '\t';
}

bool is_event_stream(const char* content_type) { return event_stream_type(content_type); }

void StreamHold::reset() {
  state_ = State::unchecked;
  rules_ = nullptr;
  parser_.reset();
  error_event_.clear();
  error_data_.reset();
}

// Out of line: its parser's construction would otherwise give start_stream_hold(), which every 2xx
// passes, a frame of six saved registers (issue 27).
__attribute__((noinline)) void StreamHold::start(const core::StreamRules& rules) {
  rules_ = &rules;
  parser_.emplace();
  state_ = State::holding;
}

StreamHold::Step StreamHold::feed(std::string_view chunk, std::size_t held) {
  // Past the bound the stream is committed as it stands: whatever follows is not retried.
  if (held + chunk.size() > rules_->hold_max_bytes) {
    state_ = State::passing;
    return Step::release;
  }
  Step step = Step::hold;
  parser_->feed(chunk, [&](const core::SseBlock& block) {
    switch (core::event_role(*rules_, block)) {
      case core::EventRole::setup: return true;
      case core::EventRole::content: step = Step::release; return false;
      case core::EventRole::error:
        step = Step::error;
        error_event_ = block.type;
        error_data_ = block.data;
        return false;
    }
    return true;
  });
  if (step != Step::hold) state_ = State::passing;
  return step;
}

// ---------------------------------------------------------------------------------------------
// The Transfer's side: called from Transfer::write for a response that is not a failure candidate.

inline bool Transfer::stream_wanted() {
  if (attempt_.response.status < 200 || attempt_.response.status >= 300) return false;
  const char* content_type = nullptr;
  if (auto getinfo = api_->easy_getinfo) {
    LibcurlScope scope(*api_);
    if (getinfo(easy_, CURLINFO_CONTENT_TYPE, &content_type) != CURLE_OK) content_type = nullptr;
  }
  if (!event_stream_type(content_type)) return false;
  resolve_request();
  // With a single attempt nothing could be retried: stream at once, as without the shim.
  if (run_.policy->max_attempts != -1 && run_.policy->max_attempts <= 1) return false;
  return run_.policy->stream.hold;
}

bool Transfer::start_stream_hold() {
  if (!stream_wanted()) {
    attempt_.stream_hold.pass();
    return false;
  }
  attempt_.stream_hold.start(run_.policy->stream);
  return true;
}

bool Transfer::feed_stream(const char* data, size_t n, size_t& result) {
  switch (attempt_.stream_hold.feed(std::string_view(data, n), attempt_.held_body.size())) {
    case StreamHold::Step::hold:
      attempt_.held_body.append(data, n);
      result = n;
      return true;
    case StreamHold::Step::release: return false;
    case StreamHold::Step::error: break;
  }
  core::Verdict verdict = decide_now(CURLE_OK);
  // The upload is rewound now, while the stream can still reach the host whole: once this
  // attempt is stopped, a failed rewind would leave the host a cut stream and a write error.
  // (The request was sent: the server is answering it; libcurl reads nothing more of it.)
  if (core::settle::wants_rewind(verdict)) core::settle::replay(verdict, rewind_upload());
  attempt_.early_verdict = verdict;
  if (verdict.action == core::Action::retry) {
    result = 0;  // our own abort of this attempt; libcurl reports CURLE_WRITE_ERROR
    return true;
  }
  // Given up: the host gets the held events and the error, then the rest, as without us.
  return false;
}

}  // namespace curlretry::shim
