// The providers curlretry knows without a config file (the hosts of packaging/examples/): what
// `curlretry -- AGENT` intercepts when AGENT cannot load libcurl. One table, read by the proxy
// (its intercept list under --builtin-providers) and by docs/PROXY.md's list.
#pragma once

#include <string_view>
#include <vector>

#include "config/proxy_settings.h"

namespace curlretry::config {

struct BuiltinProvider {
  std::string_view name;  // "anthropic"
  std::string_view host;  // the API host its SDKs and agents call: a proxy.intercept glob
  // For clients that ignore HTTPS_PROXY (Node 20's fetch, so the official SDKs on it): the base-URL
  // variable its official SDKs read and the base it stands for, made a route; "" when none.
  std::string_view base_url_env = {};
  std::string_view upstream = {};
};

// In the order of packaging/examples/README.md.
const std::vector<BuiltinProvider>& builtin_providers();

// Their hosts, as proxy.intercept globs, in table order.
std::vector<std::string_view> builtin_provider_hosts();

// The variables an agent or SDK reads its provider's base URL from, the routes' own first: the
// https:// host a user's value names is that agent's provider, intercepted as the table's are
// (a company gateway, Kimi's Anthropic endpoint, an Azure resource), rather than a blind tunnel.
const std::vector<std::string_view>& provider_base_url_variables();

// Hosts an agent reaches that are intercepted only when the config's proxy.intercept names them
// (docs/DESIGN.md: intercepting them could cost a request that works without curlretry): ChatGPT's
// backend behind its Cloudflare, Bedrock's SigV4-signed API, GitHub Copilot's (not tried here). A base URL naming one
// is left to the config as well (a Codex provider declared on chatgpt.com stays a blind tunnel until told).
const std::vector<std::string_view>& opt_in_provider_hosts();

// Agents on Node that honour HTTPS_PROXY themselves (their own proxy agent, unlike Node 20's
// fetch), by the name they are run as: interception reaches them, no base URL is set for them.
bool honours_https_proxy(std::string_view agent);

// The providers' routes (route name = provider name) and the variables they go in: a launch sets
// such a variable only when it is unset (a user's ANTHROPIC_BASE_URL, say z.ai's, stays).
std::vector<ProxyRoute> builtin_provider_routes();

}  // namespace curlretry::config
