// The recovery wake (issue 23): a retry parked for its backoff after its key met an outage ends
// that wait at the first success to the key *sent after* its failed attempt was answered, so a
// fleet that waited out an outage resumes within a look of the provider's recovery instead of
// at the end of each retry's own exponential backoff (minutes in persistent mode). A retry whose
// key was healthy when it failed (a success sent within core::budget::kHealthyWithin) keeps its
// own backoff: on a busy healthy host every success would otherwise end every backoff at once.
// Pure: the shim passes the stamps (Unix ms mod 2^32, as the fleet store keeps them).
#pragma once

#include <cstdint>

#include "core/outcome.h"

namespace curlretry::core::fleet_wake {

// How often a multi transfer that may be woken is looked at while parked: the cap on the
// timeout the host gets then (an easy wait already looks every 100 ms slice). Only while such
// a transfer is parked; otherwise the host sleeps until the next due, as before.
inline constexpr Millis kLook{250};

// What a retry remembers when it parks: 0 = it may not be woken (its key was healthy), else the
// moment its failed attempt was answered (never 0: the low bit is set, as the store's stamps).
std::uint32_t park_stamp(bool key_healthy, std::int64_t answered_ms);

// Whether the key's latest success, sent at `success_sent` (0 = none yet), was sent after the
// moment `parked` (from park_stamp; 0 = not wakeable: false). A success already on the wire
// when the retry's attempt failed is no evidence of a recovery.
bool woken(std::uint32_t parked, std::uint32_t success_sent);

}  // namespace curlretry::core::fleet_wake
