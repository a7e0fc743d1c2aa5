// What an SSE event of a 2xx stream means before the stream is committed: setup to hold, the
// first content (the commit point), or an in-band error; and whether such an error is transient.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/policy.h"
#include "core/reason.h"
#include "core/sse_parser.h"

namespace curlretry::core {

enum class EventRole : std::uint8_t { setup, content, error };

// Blocks that are not events (comments, retry:, id:) are setup. An error is an `error` or
// `response.failed` event, or any event whose JSON data is an error envelope
// ({"type":"error",...}, {"error":{...}}). A chat chunk whose delta holds only the role, or that
// has no choices yet (Azure's prompt_filter_results chunk), is setup.
EventRole event_role(const StreamRules& rules, const SseBlock& block);

// The error's own name for the log and the decision, e.g. "overloaded_error",
// "server_is_overloaded"; the event type when the data names none.
std::string stream_error_name(std::string_view event_type, std::string_view data);

// Which event of a whole stream body decides, as the shim's hold would see it: the first
// content event, an error event before it, the hold limit, or the end of the body.
struct StreamScan {
  enum class Kind : std::uint8_t { content, error, limit, end };
  Kind kind = Kind::end;
  std::size_t event = 0;   // 1-based number of the deciding event (content or error)
  std::string type;        // its event type
  std::string data;        // its data (for an error)
  std::uint64_t end = 0;   // the body offset where it ended (limit: the bound that was passed)
};
StreamScan scan_stream(const StreamRules& rules, std::string_view body);

struct StreamErrorFinding {
  bool retry = false;
  Reason reason = Reason::not_retryable;  // stream_error, permanent_code, marker, ... (core/reason.h)
  std::string reason_detail;              // "overloaded_error", "1113", "rate limit"
  std::string detail;  // appended to "HTTP 200 + stream error NAME": " (permanent)", " code 1302", ...
  std::string name;
};

// The policy's `codes`, then Google's error.status (core/provider_errors.h), then
// `never_retry.body_markers`, then the built-in table of error types (overloaded_error,
// rate_limit_error, api_error, server_is_overloaded, rate_limit_exceeded and server_error are
// transient; invalid_request_error, authentication_error, permission_error, insufficient_quota,
// billing and context-length errors are not), then `retry_on.body_markers`; else not retryable.
StreamErrorFinding classify_stream_error(const Policy& policy, std::string_view event_type, std::string_view data);

}  // namespace curlretry::core
