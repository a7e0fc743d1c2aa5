// Where a transfer is, as one value: every state of shim/transfer.cpp's machine and the only
// transitions between them (docs/DESIGN.md, "The transfer state machine").
#pragma once

#include <cstdint>
#include <string_view>

namespace curlretry::shim {

enum class Phase : std::uint8_t {
  idle,                  // no transfer under way (before begin(), after end())
  attempting,            // an attempt runs in libcurl; nothing of it has reached the program yet
  committed_at_headers,  // its headers went to the program at their end: nothing can follow to retry
  committed,             // its body is streaming to the program: this attempt's result is final
  waiting,               // between attempts (backoff, a fleet hold, a credential refresh)
  replaying,             // given up: the held response is being handed to the program
  replay_paused,         // the program paused that hand-over; it resumes on curl_easy_pause(CONT)
  done,                  // the transfer's result is known; end() puts the program's options back
};

// The phase's name, for the debug log line of each transition.
std::string_view to_string(Phase phase);

}  // namespace curlretry::shim
