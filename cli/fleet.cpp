#include "cli/fleet.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/config_load.h"
#include "cli/describe.h"
#include "cli/fleet_redis.h"
#include "cli/json.h"
#include "config/config.h"
#include "fleet/location.h"
#include "fleet/store.h"

namespace curlretry::cli {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string seconds(std::int64_t ms) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << static_cast<double>(ms) / 1000.0 << " s";
  return out.str();
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text + "  ";
}

struct View {
  std::string path;         // the table file, or the Redis URL
  std::string missing;      // why there is no table to show
  std::string redis_error;  // Redis did not answer: this machine's table is shown instead
  std::vector<FleetRow> keys;
};

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

View read_machine_view(const config::FleetSettings& settings, std::int64_t now) {
  View v;
  const std::string dir = fleet::store_dir(settings.dir, [](const char* name) { return std::getenv(name); });
  std::string error;
  auto store = fleet::Store::open_existing(dir, error);
  v.path = dir + "/" + fleet::layout::kFileName;
  if (!store) {
    v.missing = error;
    return v;
  }
  const std::string host = this_host();
  for (const auto& k : store->list(now, settings.budget)) {
    v.keys.push_back({k.key, k.cooling.until_ms, k.cooling.status, k.cooling.pid, k.cooling.pid != 0 ? host : "",
                      k.counts.requests, k.counts.retries, k.tokens, k.cooling.ended_ms, k.cooling.ended_until_ms,
                      k.cooling.ended_pid, k.cooling.ended_pid != 0 ? host : ""});
  }
  return v;
}

View read_view(const config::FleetSettings& settings, std::int64_t now) {
  View v;
  if (settings.store == config::FleetStore::redis) {
    std::string error;
    if (auto rows = redis_rows(settings, now, error)) {
      v.path = settings.redis_url;
      v.keys = std::move(*rows);
    } else {
      v = read_machine_view(settings, now);
      v.redis_error = error;
    }
  } else {
    v = read_machine_view(settings, now);
  }
  std::sort(v.keys.begin(), v.keys.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return v;
}

// Thousandths of a retry token as a decimal: "12.5", "3".
std::string tokens(std::uint64_t milli) {
  std::string out = std::to_string(milli / core::budget::kToken);
  if (std::uint64_t frac = milli % core::budget::kToken; frac != 0) {
    std::string digits = std::to_string(frac + core::budget::kToken).substr(1);
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

void print_json(const config::FleetSettings& s, const View& v, std::int64_t now) {
  std::cout << "{\"store\":" << json_quote(config::describe_fleet_store(s)) << ",\"path\":" << json_quote(v.path)
            << ",\"present\":" << (v.missing.empty() ? "true" : "false");
  if (!v.redis_error.empty()) std::cout << ",\"redis_error\":" << json_quote(v.redis_error);
  std::cout << ",\"budget\":{\"percent\":" << s.budget.percent << ",\"window_ms\":" << s.budget.window.count()
            << ",\"reserve\":" << s.budget.reserve << "},\"keys\":[";
  bool first = true;
  for (const auto& k : v.keys) {
    const std::int64_t left = std::max<std::int64_t>(0, k.until_ms - now);
    std::cout << (first ? "" : ",") << "{\"key\":" << json_quote(k.key) << ",\"cooling_ms\":" << left
              << ",\"until_ms\":" << k.until_ms << ",\"status\":" << k.status << ",\"pid\":" << k.pid
              << ",\"host\":" << json_quote(k.host) << ",\"requests\":" << k.requests << ",\"retries\":" << k.retries
              << ",\"tokens\":" << tokens(k.tokens) << ",\"cap\":" << tokens(core::budget::cap(s.budget, k.requests))
              << ",\"ended_by\":" << json_quote(k.ended_ms != 0 ? "success" : "") << ",\"ended_ms\":" << k.ended_ms
              << ",\"ended_pid\":" << k.ended_pid << ",\"ended_host\":" << json_quote(k.ended_host) << "}";
    first = false;
  }
  std::cout << "]}\n";
}

void print_text(const config::FleetSettings& s, const View& v, std::int64_t now) {
  const bool redis = s.store == config::FleetStore::redis && v.redis_error.empty();
  std::cout << "store:  " << config::describe_fleet_store(s) << (redis ? " (fleet-wide)" : " (" + v.path + ")") << "\n";
  std::cout << "fleet:  " << describe_fleet(s) << "\n";
  if (!v.redis_error.empty())
    std::cout << "\n" << v.redis_error << "; this machine's table instead (" << v.path << ")\n";
  if (!v.missing.empty()) {
    std::cout << "\n" << v.missing << " (no process has used it yet)\n";
    return;
  }
  const std::size_t by_width = redis ? 40 : 22;
  std::cout << "\n" << pad("KEY", 40) << pad("COOLING", 10) << pad("SET BY", by_width) << "REQUESTS  RETRIES  TOKENS\n";
  for (const auto& k : v.keys) {
    const std::int64_t left = std::max<std::int64_t>(0, k.until_ms - now);
    std::string by = "-";
    if (left > 0) {
      by = "HTTP " + std::to_string(k.status) + " pid " + std::to_string(k.pid);
      if (redis && !k.host.empty()) by += " on " + k.host;
    } else if (k.ended_ms != 0) {
      // Why it is not cooling any more: a request sent after it was raised succeeded.
      by = "ended by a success (pid " + std::to_string(k.ended_pid) +
           (redis && !k.ended_host.empty() ? " on " + k.ended_host : "") + ", " +
           seconds(std::max<std::int64_t>(0, k.ended_until_ms - k.ended_ms)) + " early)";
    }
    std::cout << pad(k.key, 40) << pad(left > 0 ? seconds(left) : "-", 10) << pad(by, by_width)
              << pad(std::to_string(k.requests), 8) << pad(std::to_string(k.retries), 7) << tokens(k.tokens) << " of "
              << tokens(core::budget::cap(s.budget, k.requests)) << "\n";
  }
  if (v.keys.empty()) std::cout << "(no keys)\n";
}

// Both places: this machine's table (a key may be in it alone, as a fallback's or before any
// sync) and, with a Redis store, Redis (else the next sync would bring the cooldown back).
int clear_key(const config::FleetSettings& s, const std::string& key) {
  const std::string dir = fleet::store_dir(s.dir, [](const char* name) { return std::getenv(name); });
  std::string error;
  auto store = fleet::Store::open_existing(dir, error);
  const bool machine_found = store && store->clear(key);
  if (s.store != config::FleetStore::redis) {
    if (!store) {
      std::cerr << "curlretry fleet: " << error << '\n';
      return 1;
    }
    if (!machine_found) {
      std::cerr << "curlretry fleet: no key \"" << key << "\" in " << store->path() << '\n';
      return 1;
    }
    std::cout << "cleared " << key << '\n';
    return 0;
  }
  std::string redis_error;
  const std::optional<bool> redis_found = redis_clear(s, key, now_ms(), redis_error);
  if (!redis_found) {
    std::cerr << "curlretry fleet: " << redis_error << "; " << key << " is not cleared there"
              << (machine_found ? " (cleared in this machine's table only)" : "") << '\n';
    return 1;
  }
  if (!*redis_found && !machine_found) {
    std::cerr << "curlretry fleet: no key \"" << key << "\" in " << s.redis_url << " or this machine's table\n";
    return 1;
  }
  std::cout << "cleared " << key << '\n';
  return 0;
}

}  // namespace

CLI::App* add_fleet_command(CLI::App& app, FleetOptions& options) {
  CLI::App* fleet = app.add_subcommand("fleet", "Show the fleet store: cooldowns and retry budget per key");
  fleet->set_help_flag("-h,--help", "Print this help and exit");
  fleet->add_option("--config", options.config, "Config file (default: the usual search)")->type_name("FILE");
  fleet->add_flag("--json", options.json, "Print one JSON object: store, path, budget, keys");
  fleet->add_flag("--watch", options.watch, "Refresh until interrupted");
  fleet->add_option("--interval", options.interval_s, "Seconds between refreshes (default 1)")
      ->type_name("S")
      ->check(CLI::Range(0.1, 3600.0));
  fleet->add_option("--count", options.count, "Stop --watch after N refreshes")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000));
  fleet->add_option("--clear", options.clear, "End KEY's cooldown and forget its counts")->type_name("KEY");
  return fleet;
}

int run_fleet(const FleetOptions& options) {
  const std::optional<config::Config> loaded = load_config_or_say_why(options.config);
  if (!loaded) return 1;
  const config::FleetSettings& s = loaded->settings.fleet;
  if (!options.clear.empty()) return clear_key(s, options.clear);
  for (int round = 1;; ++round) {
    const std::int64_t now = now_ms();
    const View v = read_view(s, now);
    if (options.watch && !options.json) std::cout << "\033[H\033[2J";
    if (options.json) {
      print_json(s, v, now);
    } else {
      print_text(s, v, now);
    }
    std::cout.flush();
    if (!std::cout.good()) return 1;
    if (!options.watch || (options.count > 0 && round >= options.count)) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(options.interval_s));
  }
  return 0;
}

}  // namespace curlretry::cli
