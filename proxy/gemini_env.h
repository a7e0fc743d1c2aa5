// Gemini CLI loads one .env file into its environment (its docs put GEMINI_API_KEY there, and a
// gateway's GOOGLE_GEMINI_BASE_URL beside it): the first of .gemini/.env and .env in the working
// directory and each directory above it, then ~/.gemini/.env, then ~/.env. A variable the
// environment already has stays. The launcher intercepts the hosts of the base-URL variables
// found there as it does those of the environment (proxy/main.cpp), or `curlretry -- gemini`
// through such a gateway would retry nothing without a word.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/agent_file.h"

namespace curlretry::proxy {

// The KEY=VALUE lines of one .env text as the dotenv package reads them: an optional `export `,
// `=` or `: ` after the key, a value in '…', "…" or `…` (quotes removed; \n and \r in "…"
// expanded) or bare up to a `#` (trimmed); other lines skipped. In file order.
std::vector<std::pair<std::string, std::string>> dotenv_values(std::string_view text);

// The file Gemini CLI would load from `cwd` (its workspace trusted, as a headless run needs),
// with HOME for the home directory: "" when none exists.
std::string gemini_env_file(const std::string& cwd);

// `names`' values in that file (read as proxy/agent_file.h reads an agent's file) that the
// environment does not set already, each with its name and the file.
std::vector<SettingsValue> gemini_env_values(const std::vector<std::string_view>& names);

}  // namespace curlretry::proxy
