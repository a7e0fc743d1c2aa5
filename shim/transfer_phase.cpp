#include "shim/transfer_phase.h"

#include <array>
#include <cstddef>

namespace curlretry::shim {

std::string_view to_string(Phase phase) {
  static constexpr std::array<std::string_view, 8> kNames{
      "idle", "attempting", "committed_at_headers", "committed", "waiting", "replaying", "replay_paused", "done",
  };
  static_assert(kNames.size() == static_cast<std::size_t>(Phase::done) + 1);
  const auto index = static_cast<std::size_t>(phase);
  return index < kNames.size() ? kNames[index] : std::string_view{"unknown"};
}

}  // namespace curlretry::shim
