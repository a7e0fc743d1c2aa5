// Waiting between attempts of an easy transfer: the host stays in control, its progress
// callback is called at least every 100 ms and can abort the wait.
#pragma once

#include "core/outcome.h"
#include "shim/between_attempts.h"
#include "shim/transfer.h"

namespace curlretry::shim {

// A first attempt held back (fleet.hold_new). False when the host's progress callback asked to abort.
bool wait_backoff(Transfer& transfer, core::Millis delay);

// The step between two attempts (shim/between_attempts.h, the one multi takes too), its waits
// slept through here: `go` (the caller prepares the next attempt), `aborted` (the host's progress
// callback; Transfer::aborted_during_backoff()), or `done` with the transfer's Step in `done`
// (no budget token, a failed credential refresh, the program's deadline during one).
enum class WaitEnd : unsigned char { go, aborted, done };
WaitEnd wait_between_attempts(Transfer& transfer, between_attempts::PendingRetry& retry, Transfer::Step& done);

// The host paused the replay of a held response (easy interface): wait, calling its progress
// callback as libcurl does for a paused transfer, until it unpauses, aborts, or its deadline
// passes. Returns the transfer's final code.
CURLcode wait_for_unpause(Transfer& transfer, Transfer::Step step);

}  // namespace curlretry::shim
