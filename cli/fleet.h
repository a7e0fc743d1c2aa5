// `curlretry fleet`: what the fleet store holds — every key in cooldown (until when, which status
// set it, by which pid) and the retry budget (tokens) per key — once, as JSON, or refreshed
// (--watch); `--clear KEY` ends a key's cooldown and forgets its counts. With a redis:// store
// both read and write Redis (cli/fleet_redis.h), which holds what every machine did.
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace curlretry::cli {

struct FleetOptions {
  std::optional<std::string> config;
  bool json = false;
  bool watch = false;
  double interval_s = 1.0;
  int count = 0;  // --watch refreshes; 0 = until interrupted
  std::string clear;
};

// Registers the subcommand on `app`, filling `options` when it is parsed.
CLI::App* add_fleet_command(CLI::App& app, FleetOptions& options);

int run_fleet(const FleetOptions& options);

}  // namespace curlretry::cli
