// Qwen Code (`qwen`, a Gemini CLI fork) takes its provider from its own files rather than from the
// environment the launcher sees: `modelProviders.ID[].baseUrl` in its settings.json files (its
// docs' Coding Plan, Token Plan and gateway setups), their `env` block, and the .env files it
// loads (OPENAI_BASE_URL beside the key). The launcher intercepts the https:// hosts named there as
// it does those of the agents' base-URL variables (proxy/builtin_providers.h), or `curlretry --
// qwen` on a company gateway would retry nothing without a word; and it leaves a base-URL variable
// those files set unset, or qwen would take the launch's route over the file's value and send that
// provider's key to another provider's host.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "proxy/agent_file.h"

namespace curlretry::proxy {

// The string `baseUrl` of every object in the arrays of the top-level "modelProviders" object of
// one settings.json text (`//` comments allowed, as qwen strips them), in file order; none when the
// text is not one JSON object (qwen then refuses the file too).
std::vector<std::string> qwen_provider_base_urls(std::string_view settings_json);

// The settings files qwen reads, as it finds them from the launcher's environment and working
// directory: QWEN_CODE_SYSTEM_DEFAULTS_PATH or /etc/qwen-code/system-defaults.json, <QWEN_HOME
// (a leading ~/ for HOME) or ~/.qwen>/settings.json, the workspace's .qwen/settings.json (not when
// the working directory is HOME: that is the user's), QWEN_CODE_SYSTEM_SETTINGS_PATH or
// /etc/qwen-code/settings.json.
std::vector<std::string> qwen_settings_files();

// The .env files qwen may load, in its order: .qwen/.env and .env in the working directory and each
// directory above it, then <QWEN_HOME>/.env, ~/.qwen/.env and ~/.env.
std::vector<std::string> qwen_env_files();

// Each modelProviders baseUrl of those settings files (no `name`), then `names`' values in their
// `env` blocks and in those .env files that the environment does not set already, each with its
// file; every file read as proxy/agent_file.h reads an agent's file.
std::vector<SettingsValue> qwen_settings_values(const std::vector<std::string_view>& names);

}  // namespace curlretry::proxy
