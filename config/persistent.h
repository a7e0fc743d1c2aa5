// Unattended mode (settings.persistent / CURLRETRY_PERSISTENT=1): an overnight run waits out an
// overload instead of failing, as a careful client does when nobody is there to press retry.
#pragma once

#include "config/config.h"

namespace curlretry::config {

inline constexpr long long kPersistentBackoffCapMs = 5LL * 60 * 1000;
inline constexpr long long kPersistentMaxElapsedMs = 6LL * 60 * 60 * 1000;

// When persistent: every policy whose max_attempts is not 1 ("never retry", e.g. background
// requests) gets unlimited attempts; backoff.max_ms and retry_after.max_ms become 5 minutes and
// max_elapsed_ms 6 hours where the file and env left them at the built-in values.
void apply_persistent(Config& config);

}  // namespace curlretry::config
