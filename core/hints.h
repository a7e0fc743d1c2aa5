// What a response's headers say that a retry decision reads: the server's wait hints and its
// own word on retrying. One table names every hint header; every reader (the shim's header
// callback, its libcurl lookups, `curlretry explain`) feeds the same ResponseHints through
// take(), and core::Outcome and core::cooldown::Signal embed the value as it is. A new hint
// header is one row in kHintHeaders plus the decision that reads it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/ascii.h"

namespace curlretry::core {

// 429 (rate limit), 503 and 529 (overload): the statuses whose hints may cool the whole fleet.
constexpr bool cools_fleet(int status) { return status == 429 || status == 503 || status == 529; }

struct ResponseHints {
  // Raw values, exactly as received (trimmed as field values), when present.
  std::optional<std::string> retry_after;     // Retry-After: seconds or HTTP-date
  std::optional<std::string> retry_after_ms;  // retry-after-ms
  std::optional<std::string> should_retry;    // x-should-retry: "true" / "false"
  std::optional<std::string> requests_reset;  // anthropic-ratelimit-requests-reset: RFC 3339
  std::optional<std::string> reset_requests;  // x-ratelimit-reset-requests: "1s", "6m0s", "20ms"

  // Takes one header of a response of `status`: true when `name` (any case) is a hint that
  // response needs (see HintUse). The first of a repeated header counts, as curl_easy_header()
  // reports by default. The value is trimmed as a field value (OWS before, OWS and the line's
  // end after), so a raw header line's tail and libcurl's already trimmed value store alike.
  bool take(std::string_view name, std::string_view value, int status);
};

// Which responses a hint is read from. A success must not pay for a hint only a failure reads
// (Anthropic sends its reset headers on every 200).
enum class HintUse : std::uint8_t {
  every_response,  // the retry decision reads it whatever the status (x-should-retry: true on a 200)
  cooling,         // only the fleet's cooldown reads it: a response whose status cools_fleet()
};

struct HintHeader {
  std::string_view name;  // lower case; a string literal, so name.data() is NUL-terminated
  std::optional<std::string> ResponseHints::*field;
  HintUse use;
};

inline constexpr std::array<HintHeader, 5> kHintHeaders{{
    {"retry-after", &ResponseHints::retry_after, HintUse::every_response},
    {"retry-after-ms", &ResponseHints::retry_after_ms, HintUse::every_response},
    {"x-should-retry", &ResponseHints::should_retry, HintUse::every_response},
    {"anthropic-ratelimit-requests-reset", &ResponseHints::requests_reset, HintUse::cooling},
    {"x-ratelimit-reset-requests", &ResponseHints::reset_requests, HintUse::cooling},
}};

// Whether a response of `status` reads hints used `use`.
constexpr bool wanted(HintUse use, int status) { return use == HintUse::every_response || cools_fleet(status); }

namespace hints_detail {
// Bit (c - 'a') set when a hint read for `cooling` (or for every response) starts with letter c.
constexpr std::uint32_t first_letters(bool cooling) {
  std::uint32_t bits = 0;
  for (const HintHeader& h : kHintHeaders) {
    if (h.use == HintUse::every_response || cooling) bits |= 1u << (h.name[0] - 'a');
  }
  return bits;
}
inline constexpr std::uint32_t kEveryResponse = first_letters(false);
inline constexpr std::uint32_t kCooling = first_letters(true);
}  // namespace hints_detail

// Whether a header line starting with `first` may hold a hint a response of `status` needs: a
// header callback skips every other line with one test, as cheap as before the table.
constexpr bool may_be_hint(char first, int status) {
  const char c = ascii::lower(first);
  if (c < 'a' || c > 'z') return false;
  const std::uint32_t letters = cools_fleet(status) ? hints_detail::kCooling : hints_detail::kEveryResponse;
  return ((letters >> (c - 'a')) & 1u) != 0;
}

inline bool ResponseHints::take(std::string_view name, std::string_view value, int status) {
  for (const HintHeader& h : kHintHeaders) {
    if (!ascii::iequals(name, h.name)) continue;
    if (!wanted(h.use, status)) return false;
    std::optional<std::string>& field = this->*h.field;
    if (!field) field.emplace(ascii::field_value(value));
    return true;
  }
  return false;
}

}  // namespace curlretry::core
