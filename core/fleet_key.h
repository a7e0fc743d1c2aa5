// What the fleet keys its shared state by. Budget and overload cooldowns belong to a host
// ("api.example.com:443"); a 429 belongs to one credential on that host, so two API keys never
// share a rate-limit cooldown. Credentials enter only as a short one-way tag, never as text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace curlretry::core::fleet_key {

// A 64-bit hash of `text` (FNV-1a, finished with a splitmix mix); never 0, which a store may use
// for "empty".
std::uint64_t hash(std::string_view text);

// The host part of a URL as a key, "host:port", lower case, without userinfo, with the scheme's
// default port when none is given. Writes into `out` (no allocation); returns its length, or 0
// when the URL has no host or the key would not fit.
std::size_t authority_of(std::string_view url, char* out, std::size_t capacity);

// The value of a credential header line (Authorization, x-api-key, api-key), or nullopt when the
// line is another header. "Authorization: Bearer sk-..." -> "Bearer sk-...".
std::optional<std::string_view> credential_of(std::string_view header_line);

// The key of a cooldown set by `status` on `authority`: the authority itself, or for a 429 with
// a credential "authority key:<8 hex digits>".
std::string cooldown_key(std::string_view authority, int status, std::optional<std::string_view> credential);
// The per-credential key of `authority` (what a 429 would have set), for looking it up.
std::string credential_key(std::string_view authority, std::string_view credential);

}  // namespace curlretry::core::fleet_key
