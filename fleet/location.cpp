#include "fleet/location.h"

#include "state/private_dir.h"

namespace curlretry::fleet {

std::string store_dir(const std::string& configured, const std::function<const char*(const char*)>& getenv) {
  if (!configured.empty()) return configured;
  return state::default_dir(getenv);
}

std::string ensure_private_dir(const std::string& dir) {
  return state::open_private_dir(dir, "the fleet directory").error();
}

}  // namespace curlretry::fleet
