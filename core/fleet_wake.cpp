#include "core/fleet_wake.h"

namespace curlretry::core::fleet_wake {

std::uint32_t park_stamp(bool key_healthy, std::int64_t answered_ms) {
  if (key_healthy) return 0;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(answered_ms)) | 1u;
}

bool woken(std::uint32_t parked, std::uint32_t success_sent) {
  if (parked == 0 || success_sent == 0) return false;
  // Serial-number arithmetic: a wait lasts minutes, far below the stamp's 24-day half range.
  return static_cast<std::int32_t>(success_sent - parked) > 0;
}

}  // namespace curlretry::core::fleet_wake
