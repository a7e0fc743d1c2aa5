// Base URLs an agent gets from its own settings files rather than from the environment the
// launcher sees: Claude Code applies the `env` block of its settings to every session, and that
// is where its guides put ANTHROPIC_BASE_URL for another provider (Kimi, MiniMax, a company
// gateway). `curlretry -- claude` intercepts the hosts they name as it does those of the variables
// themselves (proxy/main.cpp), or a provider configured there would go unretried without a word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace curlretry::proxy {

// The string values of `names` in the top-level "env" object of one settings file's JSON text,
// in file order; none when the text is not a JSON object (Claude Code refuses such a file too).
std::vector<std::string> settings_env_values(std::string_view json, const std::vector<std::string_view>& names);

// The files Claude Code reads its settings from, for the launcher's environment and working
// directory: <CLAUDE_CONFIG_DIR or ~/.claude>/settings.json, the project's .claude/settings.json
// and .claude/settings.local.json, /etc/claude-code/managed-settings.json and the *.json of
// managed-settings.d beside it (sorted).
std::vector<std::string> claude_settings_files();

// `names`' values in those of the files this user or root owns, each read as a regular file of
// at most 1 MiB.
std::vector<std::string> claude_settings_values(const std::vector<std::string_view>& names);

}  // namespace curlretry::proxy
