// Process-wide state of the shim: the configuration, loaded on the first intercepted call (never
// at load time). A bad config or env value turns the shim into plain pass-through, said once.
#pragma once

#include "config/config.h"

namespace curlretry::shim {

struct Runtime {
  bool active = false;  // false: every wrapper passes straight through
  config::Config config;
};

const Runtime& runtime();

}  // namespace curlretry::shim
