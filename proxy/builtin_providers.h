// What `curlretry -- COMMAND` intercepts and routes with no config file (--builtin-providers): the
// built-in providers' hosts and routes, and the hosts of the providers the user points the agents
// at in their own settings (base-URL variables, Gemini CLI's .env, Claude Code's settings, Pi's
// models.json, Codex's config.toml). Computed alike by the launcher and the proxy it starts (the
// same environment and working directory), so both digest the same config.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace curlretry::proxy {

struct BuiltinProviders {
  std::vector<std::string> route_names;  // the built-in routes added (the config's own kept)
  // Each host intercepted because the user's settings name it and no glob covered it, with where:
  // `gw.example (ANTHROPIC_BASE_URL)`, `gw.example (/home/u/.codex/config.toml)`; escaped for a line.
  std::vector<std::string> given_hosts;
};

// Adds them to `cfg`; forward proxying and CONNECT may then reach any port, and loopback without a
// token, unless the config says otherwise.
BuiltinProviders add_builtin_providers(config::Config& cfg);

}  // namespace curlretry::proxy
