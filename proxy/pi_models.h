// Pi reads no base-URL variable: a provider of the user's own (a company gateway, a proxy in front
// of a provider, a hosted vLLM) is declared in <PI_CODING_AGENT_DIR or ~/.pi/agent>/models.json,
// `providers.NAME.baseUrl`, which also overrides a built-in provider's host. The launcher
// intercepts the https:// hosts found there as it does those of the agents' base-URL variables
// (proxy/main.cpp), or `curlretry -- pi` on such a provider would retry nothing without a word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace curlretry::proxy {

// The string `baseUrl` of every member of the top-level "providers" object of one models.json
// text (comments and trailing commas allowed, as Pi allows them: kPiJsonComments), in file order; none when the
// text is not one JSON object (Pi then ignores the file too).
std::vector<std::string> pi_provider_base_urls(std::string_view models_json);

// <PI_CODING_AGENT_DIR (a leading ~/ for HOME, as Pi expands it) or ~/.pi/agent>/NAME; "" when
// neither variable is set.
std::string pi_agent_file(std::string_view name);

// Those of the user's models.json (pi_agent_file), a regular file of at most 1 MiB that this user
// or root owns.
std::vector<std::string> pi_models_base_urls();

}  // namespace curlretry::proxy
