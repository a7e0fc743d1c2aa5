// Base URLs an agent gets from its own settings files rather than from the environment the
// launcher sees: Claude Code applies the `env` block of its settings to every session, and that
// is where its guides put ANTHROPIC_BASE_URL for another provider (Kimi, MiniMax, a company
// gateway). `curlretry -- claude` intercepts the hosts they name as it does those of the variables
// themselves (proxy/main.cpp), or a provider configured there would go unretried without a word.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/agent_file.h"

namespace curlretry::proxy {

// The string members named in `names` of the top-level "env" object of one settings file's JSON
// text, in file order (no `file`); none when the text is not a JSON object (Claude Code refuses
// such a file too).
std::vector<SettingsValue> settings_env_values(std::string_view json, const std::vector<std::string_view>& names);

// The files Claude Code reads its settings from, for the launcher's environment and working
// directory: <CLAUDE_CONFIG_DIR or ~/.claude>/settings.json, the project's .claude/settings.json
// and .claude/settings.local.json, /etc/claude-code/managed-settings.json and the *.json of
// managed-settings.d beside it (sorted).
std::vector<std::string> claude_settings_files();

// `names`' values in those of the files this user or root owns, each read as a regular file of
// at most 1 MiB.
std::vector<SettingsValue> claude_settings_values(const std::vector<std::string_view>& names);

// When COMMAND is claude and its settings give it one of `proxy_variables`: the line saying that
// claude goes through that proxy in place of curlretry's (Claude Code applies its settings' env
// over the environment it was given), so none of its requests is retried, and what to do. "" else.
std::string claude_settings_bypass(std::string_view command, const std::vector<std::string_view>& proxy_variables);

// Claude Code on Amazon Bedrock through a gateway that authenticates for it (its LLM-gateway guide:
// CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_SKIP_BEDROCK_AUTH, each 1, true, yes or on as claude reads
// them, and ANTHROPIC_BEDROCK_BASE_URL), each as claude sees it: the gateway's base URL, with its
// name and the settings file it came from ("" for the environment). Its requests are then not
// signed, so the gateway's host is intercepted as another base URL's (proxy/builtin_providers.h).
std::optional<SettingsValue> claude_bedrock_gateway();

// When COMMAND is claude on Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK 1, true, yes or on) and
// no glob of `intercept` matches its Bedrock host: the line saying that none of its requests is
// retried, and how to have them retried. Each variable as claude sees it (its settings' env over
// the environment). The host: ANTHROPIC_BEDROCK_BASE_URL's when that names an https:// host that
// is not loopback (a gateway, a VPC endpoint), else bedrock-runtime.<AWS_REGION, else
// AWS_DEFAULT_REGION, else us-east-1>.amazonaws.com. The built-in hosts leave Bedrock out: its
// requests are signed over their headers (docs/PROXY.md). "" otherwise.
std::string claude_bedrock_unretried(std::string_view command, const std::vector<std::string>& intercept);

}  // namespace curlretry::proxy
