// Waiting between attempts of an easy transfer: the host stays in control, its progress
// callback is called at least every 100 ms and can abort the wait.
#pragma once

#include "core/outcome.h"
#include "shim/transfer.h"

namespace curlretry::shim {

// False when the host's progress callback asked to abort.
bool wait_backoff(Transfer& transfer, core::Millis delay);

}  // namespace curlretry::shim
