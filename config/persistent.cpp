#include "config/persistent.h"

namespace curlretry::config {
namespace {

bool builtin(const Sources& sources, const char* key) {
  const auto it = sources.find(key);
  return it == sources.end() || it->second == "built-in";
}

void make_persistent(core::Policy& policy, Sources& sources, const std::string& why) {
  if (policy.max_attempts != 1) {
    policy.max_attempts = -1;
    sources["max_attempts"] = why;
  }
  if (builtin(sources, "backoff.max_ms")) {
    policy.backoff.max = core::Millis{kPersistentBackoffCapMs};
    sources["backoff.max_ms"] = why;
  }
  if (builtin(sources, "retry_after.max_ms")) {
    policy.max_retry_after = core::Millis{kPersistentBackoffCapMs};
    sources["retry_after.max_ms"] = why;
  }
  if (builtin(sources, "max_elapsed_ms")) {
    policy.max_elapsed = core::Millis{kPersistentMaxElapsedMs};
    sources["max_elapsed_ms"] = why;
  }
}

}  // namespace

void apply_persistent(Config& config) {
  if (!config.settings.persistent) return;
  const auto source = config.settings_sources.find("persistent");
  const std::string why =
      "persistent (" + (source == config.settings_sources.end() ? std::string("settings") : source->second) + ")";
  make_persistent(config.defaults, config.default_sources, why);
  for (Rule& rule : config.rules) make_persistent(rule.policy, rule.sources, why);
}

}  // namespace curlretry::config
