// What the upstream sends: deterministic bodies (tests compare bytes) and the playing of one
// script step on a connection. No Date or Server header, so two runs are byte-identical.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "upstream/http_request.h"
#include "upstream/script.h"
#include "upstream/stream.h"

namespace curlretry::upstream {

// Bodies, as documented in README.md (tests/integration/harness.py mirrors them).
std::string ok_body(std::string_view key, std::uint64_t attempt);  // "ok key=K attempt=N\n"
std::string error_body(int status, std::string_view key, std::uint64_t attempt);
std::string_view reason_phrase(int status);
// `n` bytes of the 64-byte line "A..Za..z0..9+\n" repeated, starting at `offset`.
std::string pattern_bytes(std::uint64_t offset, std::size_t n);
std::string imf_fixdate(std::int64_t unix_seconds);  // "Sun, 06 Nov 1994 08:49:37 GMT"

struct Response {
  int status = 200;
  std::string content_type;  // empty = no Content-Type
  std::string body;
  std::uint64_t pattern = 0;  // pattern bytes sent after `body` (large bodies, never in memory)
  bool no_body = false;       // 1xx/204/304: neither body nor Content-Length
  std::vector<std::pair<std::string, std::string>> headers;  // after the framing headers
  bool close = false;         // Connection: close, then the server closes
};

// Sends head and body (head only for HEAD requests). False when the client went away.
bool send_response(Stream& stream, const Request& request, const Response& response);

// The request a step answers: its key and which attempt (1-based) it is.
struct Exchange {
  std::string_view key;
  std::uint64_t attempt = 1;
  std::string body_sha256;  // hex, of the (de-chunked) request body; filled for `echo`
  std::uint64_t body_length = 0;
};

// Plays a step whose request (and body) has been read. Returns true to keep the connection
// open for another request; false after ending it (the stream is then finished).
bool play_step(Stream& stream, const Request& request, const Step& step, const Exchange& exchange);

// early503: answers before the body is read, then ends the connection with a lingering close.
void play_early(Stream& stream, const Request& request, const Step& step, const Exchange& exchange);

}  // namespace curlretry::upstream
