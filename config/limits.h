// Bounds on configured numbers. They exist so that a typo (an extra zero, a pasted timestamp)
// fails loudly at load time instead of overflowing backoff arithmetic or parking a host for years.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace curlretry::config {

inline constexpr long long kMaxMillis = 30LL * 24 * 60 * 60 * 1000;  // 30 days
inline constexpr long long kMaxAttempts = 1000000;
inline constexpr long long kMaxBodyWindow = 1024 * 1024;              // 1 MiB
inline constexpr long long kMaxBufferBytes = 1024LL * 1024 * 1024;    // 1 GiB

struct ParsedInteger {
  std::optional<long long> value;
  bool overflow = false;  // digits only, but beyond long long
};

// Decimal integers only: optional sign, then digits ("0x10", "1e3", "1.0", " 3" are not integers).
ParsedInteger parse_integer(std::string_view text);

}  // namespace curlretry::config
