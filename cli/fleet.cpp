#include "cli/fleet.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/config_load.h"
#include "cli/describe.h"
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
  std::string path;
  std::string missing;  // why there is no table to show
  std::vector<fleet::KeyView> keys;
};

View read_view(const config::FleetSettings& settings) {
  View v;
  const std::string dir = fleet::store_dir(settings.dir, [](const char* name) { return std::getenv(name); });
  std::string error;
  auto store = fleet::Store::open_existing(dir, error);
  v.path = dir + "/" + fleet::layout::kFileName;
  if (!store) {
    v.missing = error;
    return v;
  }
  v.keys = store->list(now_ms(), settings.budget);
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
            << ",\"present\":" << (v.missing.empty() ? "true" : "false") << ",\"budget\":{\"percent\":"
            << s.budget.percent << ",\"window_ms\":" << s.budget.window.count() << ",\"reserve\":" << s.budget.reserve
            << "},\"keys\":[";
  bool first = true;
  for (const auto& k : v.keys) {
    const std::int64_t left = std::max<std::int64_t>(0, k.cooling.until_ms - now);
    std::cout << (first ? "" : ",") << "{\"key\":" << json_quote(k.key) << ",\"cooling_ms\":" << left
              << ",\"until_ms\":" << k.cooling.until_ms << ",\"status\":" << k.cooling.status
              << ",\"pid\":" << k.cooling.pid << ",\"requests\":" << k.counts.requests
              << ",\"retries\":" << k.counts.retries << ",\"tokens\":" << tokens(k.tokens)
              << ",\"cap\":" << tokens(core::budget::cap(s.budget, k.counts.requests)) << "}";
    first = false;
  }
  std::cout << "]}\n";
}

void print_text(const config::FleetSettings& s, const View& v, std::int64_t now) {
  std::cout << "store:  " << config::describe_fleet_store(s) << " (" << v.path << ")\n";
  std::cout << "fleet:  " << describe_fleet(s) << "\n";
  if (!v.missing.empty()) {
    std::cout << "\n" << v.missing << " (no process has used it yet)\n";
    return;
  }
  std::cout << "\n" << pad("KEY", 40) << pad("COOLING", 10) << pad("SET BY", 22) << "REQUESTS  RETRIES  TOKENS\n";
  for (const auto& k : v.keys) {
    const std::int64_t left = std::max<std::int64_t>(0, k.cooling.until_ms - now);
    const std::string by = left > 0 ? "HTTP " + std::to_string(k.cooling.status) + " pid " +
                                          std::to_string(k.cooling.pid)
                                    : "-";
    std::cout << pad(k.key, 40) << pad(left > 0 ? seconds(left) : "-", 10) << pad(by, 22)
              << pad(std::to_string(k.counts.requests), 8) << pad(std::to_string(k.counts.retries), 7)
              << tokens(k.tokens) << " of " << tokens(core::budget::cap(s.budget, k.counts.requests)) << "\n";
  }
  if (v.keys.empty()) std::cout << "(no keys)\n";
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
  fleet->add_option("--count", options.count, "Stop --watch after N refreshes")->type_name("N")->check(
      CLI::Range(1, 1000000));
  fleet->add_option("--clear", options.clear, "End KEY's cooldown and forget its counts")->type_name("KEY");
  return fleet;
}

int run_fleet(const FleetOptions& options) {
  const std::optional<config::Config> loaded = load_config_or_say_why(options.config);
  if (!loaded) return 1;
  const config::FleetSettings& s = loaded->settings.fleet;
  if (!options.clear.empty()) {
    const std::string dir = fleet::store_dir(s.dir, [](const char* name) { return std::getenv(name); });
    std::string error;
    auto store = fleet::Store::open_existing(dir, error);
    if (!store) {
      std::cerr << "curlretry fleet: " << error << '\n';
      return 1;
    }
    if (!store->clear(options.clear)) {
      std::cerr << "curlretry fleet: no key \"" << options.clear << "\" in " << store->path() << '\n';
      return 1;
    }
    std::cout << "cleared " << options.clear << '\n';
    return 0;
  }
  for (int round = 1;; ++round) {
    const View v = read_view(s);
    const std::int64_t now = now_ms();
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
