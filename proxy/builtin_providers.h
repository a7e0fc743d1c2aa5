// What `curlretry -- COMMAND` intercepts and routes with no config file (--builtin-providers): the
// built-in providers' hosts and routes, and the hosts of the providers the user points the agents
// at in their own settings (base-URL variables, Gemini CLI's .env, Claude Code's settings, Pi's
// models.json, Codex's config.toml, Qwen Code's settings and .env files). Computed alike by the
// launcher and the proxy it starts (the same environment and working directory), so both digest
// the same config.
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
  // The base-URL variables a file of the user's sets for an agent (Gemini CLI's or Qwen Code's
  // .env, Qwen Code's settings' `env` block), whatever URL it names, each with the first file
  // (escaped for a line): the agent, or a Node program's dotenv or `--env-file`, loads the file's
  // value only over an unset variable, so a built-in route handed in it would win and send that
  // provider's key to the built-in provider's host.
  struct FileVariable {
    std::string name;
    std::string file;
  };
  std::vector<FileVariable> file_variables;
};

// Adds them to `cfg`; forward proxying and CONNECT may then reach any port, and loopback without a
// token, unless the config says otherwise.
BuiltinProviders add_builtin_providers(config::Config& cfg);

}  // namespace curlretry::proxy
