// Scripted server-sent-event streams in the shape LLM providers send them (Anthropic messages,
// OpenAI chat and responses): a 200 text/event-stream whose events say "overloaded" before any
// content, after it, stall, or ping for a while. The grammar is in README.md (`sse-<name>`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "upstream/http_request.h"
#include "upstream/script.h"
#include "upstream/stream.h"

namespace curlretry::upstream {

// Parses `sse-<name>` (and `sse-stall-<ms>`, `sse-pings-<bytes>`) into `step`. nullopt: not an
// SSE script name at all; false: it is one, but malformed (`error` says why).
std::optional<bool> parse_sse_script(std::string_view base, Step& step, std::string* error);

// The stream's body as a list of pieces, each sent on its own (before +split/+cut/+eol), with
// the pause that precedes each piece in ms. Deterministic: tests mirror it byte for byte.
struct SsePiece {
  long pause_ms = 0;
  std::string bytes;
};
std::vector<SsePiece> sse_script_pieces(const Step& step, std::string_view key, std::uint64_t attempt);

// Plays an sse-<name> step: the 200 head, then the pieces as HTTP/1.1 chunks. False: the
// connection was ended.
bool play_sse_script(Stream& stream, const Request& request, const Step& step, std::string_view key,
                     std::uint64_t attempt);

}  // namespace curlretry::upstream
