// `curlretry fleet` with a redis:// store: the fleet-wide view and `--clear` read and write Redis
// itself (through the module the preload library uses), not only this machine's table, which
// holds what this machine's processes last saw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/fleet_settings.h"

namespace curlretry::cli {

struct FleetRow {
  std::string key;
  std::int64_t until_ms = 0;  // Unix ms; 0 = not cooling
  int status = 0;             // what set the cooldown
  int pid = 0;
  std::string host;  // where that process ran ("" when not known)
  std::uint64_t requests = 0;
  std::uint64_t retries = 0;
  std::uint64_t tokens = 0;  // what a retry decision now would find, in core::budget::kToken units
  // The last cooldown a success ended: when, the deadline it had, whose success (and, from Redis,
  // on which machine).
  std::int64_t ended_ms = 0;
  std::int64_t ended_until_ms = 0;
  int ended_pid = 0;
  std::string ended_host;
};

// Every key Redis holds, sorted. nullopt with `error` (a sentence) when the module cannot be
// loaded or Redis does not answer.
std::optional<std::vector<FleetRow>> redis_rows(const config::FleetSettings& settings, std::int64_t now_ms,
                                                std::string& error);

// Deletes the key's cooldown and budget from Redis. nullopt with `error` as above; else whether
// Redis held anything for it.
std::optional<bool> redis_clear(const config::FleetSettings& settings, const std::string& key, std::int64_t now_ms,
                                std::string& error);

}  // namespace curlretry::cli
