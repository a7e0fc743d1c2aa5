// The step between two attempts of a transfer, the same for the easy and the multi interface
// (issue 28): each look at a retry that waits says whether it waits on, goes now, or is done.
// The callers only differ in how they wait: the easy loop sleeps in slices and calls the
// program's progress callback (shim/backoff_wait.cpp), the multi handle parks the transfer in its
// heap (shim/multi_state.cpp). Neither blocks on the credential command: it runs in the
// background and is looked at every kCredentialPoll.
#pragma once

#include <curl/curl.h>

#include "shim/clock.h"
#include "shim/transfer.h"

namespace curlretry::shim::between_attempts {

inline constexpr auto kCredentialPoll = std::chrono::milliseconds(20);

// What one retry waits for, held by its caller (the easy loop, the multi's parked entry).
struct PendingRetry {
  Clock::time_point due;           // the end of the current wait (backoff, credential poll, fleet)
  CURLcode last_code = CURLE_OK;   // the last attempt's result: the answer to the host on a give-up
  bool wakeable = false;           // the backoff may end early on the key's recovery (wake_due)
};

// A retry's backoff of `delay` begins at `now`: the recovery wake is armed (Transfer::arm_wake).
PendingRetry start(Transfer& transfer, core::Millis delay, CURLcode code, Clock::time_point now);
// A first attempt held back (fleet.hold_new): a wait no success ends early.
inline PendingRetry hold(core::Millis delay, CURLcode code, Clock::time_point now) {
  return PendingRetry{now + delay, code, false};
}

struct Look {
  enum class Kind : unsigned char {
    wait,  // look again at `until`
    go,    // the caller prepares the next attempt (Transfer::prepare_next_attempt) and starts it
    done,  // give up: the caller ends the transfer with `step`
  };
  Kind kind = Kind::go;
  Clock::time_point until{};
  Transfer::Step step{};
};

// In this order: (1) a backoff not over (and not ended by the key's recovery) waits, with its
// heartbeat line when due; (2) a credential command still running waits kCredentialPoll (past the
// program's deadline: done, with the refused response), a failed one gives up with the refused
// response; (3) the fleet's gate: wait, give up for budget, or go.
Look look(Transfer& transfer, PendingRetry& retry, Clock::time_point now);

// When a retry that waits is looked at next: its due time, its next heartbeat line, or, when the
// key's recovery may end it, core::fleet_wake::kLook from now, whichever comes first.
Clock::time_point next_look(const Transfer& transfer, const PendingRetry& retry, Clock::time_point now);

}  // namespace curlretry::shim::between_attempts
