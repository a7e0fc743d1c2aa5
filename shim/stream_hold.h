// The hold of a 2xx text/event-stream response: its setup events are kept back from the host
// until the first content event, so that an error event sent before any content can still be
// retried. Bounded by the policy's stream.hold_max_bytes. The held bytes themselves live in the
// Transfer's held body, so delivery (and a host's pause during it) takes the usual path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/policy.h"
#include "core/sse_parser.h"

namespace curlretry::shim {

// "text/event-stream", any case, with or without parameters.
bool is_event_stream(const char* content_type);

class StreamHold {
 public:
  enum class Step : std::uint8_t {
    hold,     // the chunk holds only setup events (or part of one): keep it
    release,  // content arrived, or the hold outgrew its bound: deliver what is held, then this
    error,    // an error event before any content: error_event() / error_data()
  };

  void reset();  // a new attempt
  // Whether this attempt's response was already looked at (and then held or passed on).
  bool checked() const { return state_ != State::unchecked; }
  bool holding() const { return state_ == State::holding; }
  void start(const core::StreamRules& rules);
  void pass() { state_ = State::passing; }  // from now on bytes flow through

  // `held`: the bytes already held. After anything but `hold` the stream passes.
  Step feed(std::string_view chunk, std::size_t held);

  bool has_error() const { return error_data_.has_value(); }
  const std::string& error_event() const { return error_event_; }
  const std::optional<std::string>& error_data() const { return error_data_; }

 private:
  enum class State : std::uint8_t { unchecked, holding, passing };
  State state_ = State::unchecked;
  const core::StreamRules* rules_ = nullptr;
  // Built by start(): most responses are no event stream, and a fresh attempt's StreamHold is
  // then only a few fields to set (the success path's cost, issue 27).
  std::optional<core::SseParser> parser_;
  std::string error_event_;
  std::optional<std::string> error_data_;
};

}  // namespace curlretry::shim
