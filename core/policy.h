// The retry policy for one request: limits, backoff and what counts as transient.
// Built by config/ (YAML + env) or by hand in tests; consumed by decide().
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/outcome.h"

namespace curlretry::core {

enum class Strategy : std::uint8_t { exponential, triangular, constant };
enum class Jitter : std::uint8_t { none, full, equal, decorrelated };

std::string_view to_string(Strategy s);
std::string_view to_string(Jitter j);
std::optional<Strategy> strategy_from_string(std::string_view name);
std::optional<Jitter> jitter_from_string(std::string_view name);

struct Backoff {
  Strategy strategy = Strategy::exponential;
  Millis base{1500};
  Millis max{60000};
  Jitter jitter = Jitter::none;
};

// Classification by a value found in a JSON error body, e.g. z.ai's {"error":{"code":"1302"}}.
// `path` is dotted ("code", "error.code", "error.type"); values compare as text, so 1302 and
// "1302" are the same.
struct CodeTable {
  std::string path;
  std::vector<std::string> retry;
  std::vector<std::string> permanent;
};

// How a 2xx `text/event-stream` response is held until its first content event, so that an
// error event sent before any content (an in-band "overloaded") can still be retried.
struct StreamRules {
  bool hold = true;
  std::size_t hold_max_bytes = 64 * 1024;  // past this, the stream is committed and flows on
  // Event types (the event: field) that are content. Empty: every event that is neither setup
  // nor an error is content; otherwise unlisted events are held like setup events.
  std::vector<std::string> content_events;
  // Event types held as setup; the built-in list covers Anthropic and OpenAI responses streams.
  std::vector<std::string> setup_events;
};

struct Policy {
  int max_attempts = 3;  // all attempts; 1 = never retry; -1 = unlimited (bounded by max_elapsed)
  Millis max_elapsed{30 * 60 * 1000};
  Backoff backoff;
  bool honor_retry_after = true;
  Millis max_retry_after{120000};  // a longer server-requested wait means: give up now

  std::vector<int> retry_status;
  std::vector<std::string> retry_markers;      // retried on a 4xx
  std::vector<Transport> retry_transport;
  // A POST or PATCH that went out and got no response at all (empty reply, reset, receive or
  // send error, timeout) is sent again. The seeds' requests (LLM APIs) are idempotent; a program
  // whose POSTs are not says false.
  bool retry_unanswered_post = true;
  std::vector<std::string> permanent_markers;  // give up, whatever the status
  std::vector<CodeTable> codes;

  std::size_t body_window = 4096;  // how much of the body markers and codes look at

  StreamRules stream;

  // The seeds: 3 attempts, exponential from 1500 ms, the risk-control and permanent markers.
  static Policy builtin();
};

}  // namespace curlretry::core
