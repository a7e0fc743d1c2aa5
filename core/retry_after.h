// Server-requested waits: Retry-After (RFC 9110 §10.2.3) and retry-after-ms.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "core/outcome.h"

namespace curlretry::core {

// delta-seconds or an HTTP-date in any of the three RFC 9110 forms (IMF-fixdate, RFC 850,
// asctime). A date in the past gives 0. Garbage, negative numbers and overflow give nullopt.
std::optional<Millis> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now);

// Non-negative milliseconds, possibly fractional ("1500", "12.5"); nullopt otherwise.
std::optional<Millis> parse_retry_after_ms(std::string_view value);

// An HTTP-date as seconds since the epoch; nullopt when it is not one of the three forms.
std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view value);

}  // namespace curlretry::core
