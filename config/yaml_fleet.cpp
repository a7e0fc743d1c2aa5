#include "config/yaml_fleet.h"

#include "config/keys.h"

namespace curlretry::config {
namespace {

void read_budget(const Values& v, const YamlNode& node, core::budget::Budget& budget, Sources& sources) {
  v.expect_map(node, "fleet.budget", true);
  v.check_keys(node, "fleet.budget", file_keys(KeyScope::fleet, "fleet.budget"));
  if (const YamlNode* percent = member(node, "percent")) {
    budget.percent = static_cast<int>(v.integer(*percent, "fleet.budget.percent", 0, kMaxBudgetPercent,
                                                "a percentage of requests, 0..1000"));
    sources["fleet.budget.percent"] = v.where(*percent);
  }
  if (const YamlNode* window = member(node, "window_ms")) {
    budget.window = core::Millis{v.integer(*window, "fleet.budget.window_ms", core::budget::kMinWindow.count(),
                                           core::budget::kMaxWindow.count(), "ms, 500..64000")};
    sources["fleet.budget.window_ms"] = v.where(*window);
  }
  if (const YamlNode* reserve = member(node, "reserve")) {
    budget.reserve = static_cast<int>(v.integer(*reserve, "fleet.budget.reserve", 0, kMaxBudgetReserve,
                                                "retries per window, 0..65535"));
    sources["fleet.budget.reserve"] = v.where(*reserve);
  }
}

}  // namespace

void read_fleet_section(const Values& v, const YamlNode& node, FleetSettings& fleet, Sources& sources) {
  v.expect_map(node, "fleet", true);
  v.check_keys(node, "fleet", file_keys(KeyScope::fleet, "fleet"));
  if (const YamlNode* store = member(node, "store")) {
    const std::string text = v.string(*store, "fleet.store");
    std::string why;
    auto parsed = parse_fleet_store(text, why);
    if (!parsed) v.fail(*store, "fleet.store", "\"" + text + "\": " + why);
    fleet.store = parsed->store;
    fleet.redis_url = parsed->redis_url;
    sources["fleet.store"] = v.where(*store);
  }
  if (const YamlNode* hold = member(node, "hold_new")) {
    fleet.hold_new = v.boolean(*hold, "fleet.hold_new");
    sources["fleet.hold_new"] = v.where(*hold);
  }
  if (const YamlNode* budget = member(node, "budget")) read_budget(v, *budget, fleet.budget, sources);
}

}  // namespace curlretry::config
