// Codex reads no base-URL variable (OPENAI_BASE_URL is ignored): a provider of the user's own (a
// company gateway, LiteLLM, a hosted vLLM) is declared in <CODEX_HOME or ~/.codex>/config.toml,
// `[model_providers.NAME] base_url`, and the built-in provider's host is moved by the top-level
// `openai_base_url`. The launcher intercepts the https:// hosts found there as it does those of
// the agents' base-URL variables (proxy/main.cpp), or `curlretry -- codex` on such a provider
// would retry nothing without a word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace curlretry::proxy {

// <CODEX_HOME>/NAME, else ~/.codex/NAME; "" when neither variable is set.
std::string codex_home_file(std::string_view name);

// The base URLs one config.toml text declares: `openai_base_url`, then each table of
// `model_providers`' `base_url` (by name); none when the text is not TOML (Codex then
// refuses to start) or says none.
std::vector<std::string> codex_provider_base_urls(std::string_view config_toml);

// Those of the user's config.toml, a regular file of at most 1 MiB that this user or root owns.
std::vector<std::string> codex_config_base_urls();

}  // namespace curlretry::proxy
