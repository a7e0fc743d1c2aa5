// The `fleet:` settings: where shared cooldowns and retry budgets live (off, the machine store,
// or a Redis server), whether new requests wait out a cooldown too, and the budget's numbers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/retry_budget.h"

namespace curlretry::config {

enum class FleetStore : std::uint8_t { off, machine, redis };

struct FleetSettings {
  FleetStore store = FleetStore::machine;
  std::string redis_url;  // set when store == redis
  std::string dir;        // CURLRETRY_FLEET_DIR; empty = state::default_dir()
  bool hold_new = false;  // first attempts also wait out a cooldown
  core::budget::Budget budget;
};

// Bounds of the budget keys.
inline constexpr long long kMaxBudgetPercent = 1000;
inline constexpr long long kMaxBudgetReserve = 65535;

// "off", "machine", or "redis://host[:port][/db]". On failure, nullopt and `why` (a phrase).
struct ParsedStore {
  FleetStore store;
  std::string redis_url;
};
std::optional<ParsedStore> parse_fleet_store(std::string_view text, std::string& why);

// "off", "machine" or the Redis URL.
std::string describe_fleet_store(const FleetSettings& fleet);

}  // namespace curlretry::config
