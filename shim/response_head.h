// What one response's header lines say that the retry decision reads: its status, the server's
// hints (core/hints.h), and whether anything could still follow that we might retry. Fed line by
// line as libcurl hands header lines to a header callback; without one, the same hints come from
// libcurl's own header store (shim/header_lookup.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/hints.h"

namespace curlretry::shim {

struct ResponseHead {
  int status = 0;
  core::ResponseHints hints;
  bool candidate = false;          // a failure candidate: its body is held, not streamed
  bool no_body = false;            // Content-Length: 0
  bool location_not_http = false;  // a Location whose scheme is not http(s)

  // Takes one header line (with its line ending). A status line starts a new response (a 1xx,
  // a redirect, a proxy's CONNECT answer came before). True for the blank line that ends the
  // headers: the caller then classifies the response (`candidate`).
  bool note_line(std::string_view line);
  // Whether a failure status or a server hint could make this response retryable: a plain
  // 2xx/3xx streams at once without even a policy lookup (the success path stays cheap).
  bool maybe_retryable() const { return status >= 400 || status == 0 || hints.should_retry.has_value(); }
  // Back to a fresh head's value, in place: no temporary built, moved from and destroyed (what
  // `*this = ResponseHead{}` costs for each of the hints), only engaged hints reset.
  void clear() noexcept {
    // Every hint of core/hints.h: a new one must be reset here too.
    static_assert(sizeof(core::ResponseHints) == 5 * sizeof(std::optional<std::string>));
    status = 0;
    hints.retry_after.reset();
    hints.retry_after_ms.reset();
    hints.should_retry.reset();
    hints.requests_reset.reset();
    hints.reset_requests.reset();
    candidate = no_body = location_not_http = false;
  }
};

// The status as the decision saw it: the head's (from its status line, or CURLINFO_RESPONSE_CODE
// once the first body byte came without our header callback), else libcurl's `response_code`
// (a response with no body byte and no header callback never set the head's). The one
// definition for the outcome, the attempt log and the fleet. (The outcome then puts a proxy's
// refusal of CONNECT in its place; see Transfer::outcome.)
constexpr int status_seen(int head_status, long response_code) {
  return head_status != 0 ? head_status : static_cast<int>(response_code);
}

// "HTTP/1.1 503 Service Unavailable" -> 503; 0 when the line is not a status line.
int status_of_line(std::string_view line);
bool is_blank_line(std::string_view line);

}  // namespace curlretry::shim
