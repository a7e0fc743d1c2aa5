// HTTP/1.1 requests as the upstream needs them: the head, then a body framed by Content-Length
// or chunked encoding, streamed to a sink (never held whole: uploads may be large).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "upstream/stream.h"

namespace curlretry::upstream {

struct Request {
  std::string method;
  std::string target;  // as sent, e.g. "/s/k/503,200?token=x"
  std::string path;    // target without query or fragment; absolute-form reduced to its path
  std::vector<std::pair<std::string, std::string>> headers;

  std::uint64_t content_length = 0;
  bool chunked = false;
  bool expect_continue = false;
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"; HTTP/1.0 never

  bool has_body() const { return chunked || content_length > 0; }
  // First value of a header, case-insensitive name; empty when absent.
  std::string_view header(std::string_view name) const;
};

enum class HeadResult : std::uint8_t { ok, closed, malformed };

// Reads one request head (request line + headers + blank line). `closed` = the client went away
// before sending a byte of it, the normal end of a keep-alive connection.
HeadResult read_head(Stream& stream, Request& request, std::string* error);

// Parses a complete head (without reading); public so its rules are testable on their own.
bool parse_head(std::string_view head, Request& request, std::string* error);

// Reads the body (de-chunked) and hands it to `sink` piece by piece. False on a broken body.
bool read_body(Stream& stream, const Request& request,
               const std::function<void(std::string_view)>& sink);

}  // namespace curlretry::upstream
