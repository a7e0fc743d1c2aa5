#include "cli/config_load.h"

#include <iostream>

namespace curlretry::cli {

std::optional<config::Config> load_config_or_say_why(const std::optional<std::string>& path) {
  config::LoadResult loaded = config::load(config::Environment::process(), path);
  for (const auto& warning : loaded.warnings) std::cerr << "curlretry: warning: " << warning << '\n';
  if (!loaded.ok()) std::cerr << "curlretry: " << loaded.error << '\n';
  return std::move(loaded.config);
}

}  // namespace curlretry::cli
