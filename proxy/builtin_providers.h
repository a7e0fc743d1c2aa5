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

// Adds them to `cfg`; forward proxying and CONNECT may then reach any port, and loopback without a
// token, unless the config says otherwise. Returns the names of the routes added.
std::vector<std::string> add_builtin_providers(config::Config& cfg);

}  // namespace curlretry::proxy
