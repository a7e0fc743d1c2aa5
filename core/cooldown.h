// Shared cooldown as arithmetic: which server signals cool a key for the whole fleet, and until
// when. Only a server's own words count (429/503/529 with Retry-After, retry-after-ms or a
// provider's reset header); a process's network errors never cool anyone. Pure: the caller
// passes the clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/hints.h"
#include "core/outcome.h"

namespace curlretry::core::cooldown {

// A cooldown longer than this is taken for garbage (a pasted timestamp, a corrupt store) and
// clamped: no fleet should stand still for more than a day on one header.
inline constexpr Millis kMaxCooldown{24LL * 60 * 60 * 1000};

// What a response said about when to come back: its status and its hints, as received.
struct Signal {
  int status = 0;
  ResponseHints hints;
};

// 429 (rate limit), 503 and 529 (overload) are the statuses that may cool the fleet (defined
// beside the hint table, which reads the reset headers only for them).
using core::cools_fleet;
// A 429 is about one credential; overload is about the host.
bool per_credential(int status);

// How long the fleet should keep away, from now: retry-after-ms, else Retry-After, else (only
// when the response had neither: a server that said when, even unreadably, is not second-guessed)
// the later of the provider reset headers. nullopt when the status does not cool the fleet or no
// signal parses. Clamped to kMaxCooldown.
std::optional<Millis> wait_of(const Signal& signal, std::chrono::system_clock::time_point now);

// "1s", "6m0s", "1m30.5s", "20ms", "2h" (OpenAI's x-ratelimit-reset-*); nullopt otherwise.
std::optional<Millis> parse_reset_duration(std::string_view value);
// "2026-01-15T12:00:30Z", "2026-01-15T12:00:30.250+01:00"; nullopt otherwise.
std::optional<std::chrono::sys_time<Millis>> parse_rfc3339(std::string_view value);

// Milliseconds from `now_ms` until `until_ms` (both Unix ms), 0 when passed.
Millis remaining(std::int64_t until_ms, std::int64_t now_ms);

// The wait before a retry the policy scheduled after `planned`, with the fleet cooling the key
// for `cooling` more: the longer of the two.
Millis combine(Millis planned, Millis cooling);

// Whether a wait of `wait` still fits the request's limits: the policy's cap on server waits
// and the time left before the host's deadline or max_elapsed.
bool fits(Millis wait, Millis max_server_wait, std::optional<Millis> time_left);

}  // namespace curlretry::core::cooldown
