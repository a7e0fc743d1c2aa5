// Waiting between attempts of an easy transfer: the host stays in control, its progress
// callback is called at least every 100 ms and can abort the wait.
#pragma once

#include "core/outcome.h"
#include "shim/transfer.h"

namespace curlretry::shim {

// False when the host's progress callback asked to abort.
bool wait_backoff(Transfer& transfer, core::Millis delay);

// wait_backoff, then as much longer as the fleet asks for (Transfer::fleet_gate(): a cooldown
// raised meanwhile, the wait for a budget token). With the fleet on, a retry that met its key's
// outage ends its backoff at the key's first success sent after its failed attempt (looked at
// every slice; core/fleet_wake.h) and then goes through the same gate. `budget`: no token came within the request's
// limits (the caller gives up with Transfer::give_up_for_budget()).
enum class WaitEnd : unsigned char { go, aborted, budget };
WaitEnd wait_before_retry(Transfer& transfer, core::Millis delay);

// The host paused the replay of a held response (easy interface): wait, calling its progress
// callback as libcurl does for a paused transfer, until it unpauses, aborts, or its deadline
// passes. Returns the transfer's final code.
CURLcode wait_for_unpause(Transfer& transfer, Transfer::Step step);

}  // namespace curlretry::shim
