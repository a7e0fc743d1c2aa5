// What one attempt of a transfer produced, as the shim observed it. Plain data:
// the core decides from this alone (plus the policy, a clock reading and a random source).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/hints.h"

namespace curlretry::core {

using Millis = std::chrono::milliseconds;

// How the attempt ended at the transport level. `ok` means a complete HTTP response arrived.
enum class Transport : std::uint8_t {
  ok,
  connect_refused,
  reset,
  send,
  recv,
  empty_reply,
  tls_handshake,
  http2_stream,
  timeout,
  host_abort,    // the host's own callback stopped the transfer: never retried
  bad_argument,  // the host asked for something libcurl refused: never retried
  other,
};

std::string_view to_string(Transport t);
// Accepts the names printed by to_string ("connect_refused", "reset", ...); nullopt otherwise.
std::optional<Transport> transport_from_string(std::string_view name);

// A final success: a 2xx, or a 3xx (a redirect the program did not ask libcurl to follow is its
// answer). The one definition of "2xx/3xx" for the decision, the shim's success path (it
// streams such a response without a lookup), the fleet's credit and the attempt log.
constexpr bool is_final_success(int status) { return status >= 200 && status < 400; }

struct Outcome {
  Transport transport = Transport::ok;
  int status = 0;  // final HTTP status of the attempt, 0 when no response line arrived

  ResponseHints hints;  // the response's hint headers, as received (core/hints.h)

  std::string body_prefix;  // the first bytes of the body (the shim bounds it)

  // An SSE error event of a 2xx event stream that arrived before any content event: its event
  // type and data. The attempt is then no success; the data is classified like an error body.
  std::optional<std::string> stream_error;
  std::string stream_error_event;

  bool committed = false;   // a body byte already reached the host
  bool replayable = true;   // the request can be sent again (its upload can be rewound)
  bool unsafe_method = false;  // POST or PATCH: not idempotent by HTTP's definition

  int attempt = 1;               // 1-based number of the attempt that just ended
  Millis elapsed{0};             // since the transfer began (first attempt start)
  std::optional<Millis> remaining;  // time left before the host's own deadline, if it has one
  Millis previous_delay{0};      // the delay chosen before this attempt (0 for the first)
};

}  // namespace curlretry::core
