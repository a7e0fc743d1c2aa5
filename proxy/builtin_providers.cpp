#include "proxy/builtin_providers.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "config/agent_providers.h"
#include "config/glob.h"
#include "core/log_text.h"
#include "core/url.h"
#include "proxy/agent_settings.h"
#include "proxy/codex_config.h"
#include "proxy/gemini_env.h"
#include "proxy/pi_models.h"
#include "proxy/qwen_settings.h"
#include "proxy/request_rules.h"

namespace curlretry::proxy {
namespace {

// A base URL the user gave, with where it was given, for the launch's line.
struct GivenUrl {
  std::string url;
  std::string source;  // the variable, "VARIABLE in FILE" or the file
  // The variable and its file, when a file of the user's sets it that is loaded over an unset one.
  BuiltinProviders::FileVariable file_variable;
};

// A settings value as given: where (its name, and the file unless the environment; the file alone
// for a file's own key), and its variable when a file sets it that is loaded over an unset one
// (a .env file, Qwen Code's settings; not Claude Code's, which claude alone applies, over the
// environment).
GivenUrl as_given(SettingsValue set, bool loaded_over_unset) {
  GivenUrl out{std::move(set.value), {}, {}};
  if (set.file.empty()) {
    out.source = set.name;
  } else if (set.name.empty()) {
    out.source = std::move(set.file);
  } else {
    out.source = set.name + " in " + set.file;
    if (loaded_over_unset) out.file_variable = {std::move(set.name), std::move(set.file)};
  }
  return out;
}

// The providers' base URLs as the user gave them: the agents' variables
// (config::provider_base_url_variables) in the environment, in the .env file Gemini CLI loads
// (proxy/gemini_env.h) and in Claude Code's settings files (proxy/agent_settings.h), Claude Code's
// Bedrock gateway when it authenticates for claude (its requests are then not signed: nothing a
// retry could break), then Pi's providers in its models.json (proxy/pi_models.h), Codex's in its
// config.toml (proxy/codex_config.h) and Qwen Code's in its settings and .env files
// (proxy/qwen_settings.h).
std::vector<GivenUrl> base_urls_given() {
  const std::vector<std::string_view>& names = config::provider_base_url_variables();
  std::vector<GivenUrl> out;
  for (const std::string_view name : names) {
    if (const char* value = std::getenv(std::string(name).c_str())) out.push_back({value, std::string(name), {}});
  }
  for (SettingsValue& set : gemini_env_values(names)) out.push_back(as_given(std::move(set), true));
  for (SettingsValue& set : claude_settings_values(names)) out.push_back(as_given(std::move(set), false));
  if (std::optional<SettingsValue> set = claude_bedrock_gateway()) out.push_back(as_given(std::move(*set), false));
  for (std::string& url : pi_models_base_urls()) out.push_back({std::move(url), pi_agent_file("models.json"), {}});
  for (std::string& url : codex_config_base_urls()) out.push_back({std::move(url), codex_home_file("config.toml"), {}});
  for (SettingsValue& set : qwen_settings_values(names)) out.push_back(as_given(std::move(set), true));
  return out;
}

}  // namespace

// The built-in routes are served whenever the providers are (one config for every client, so
// one shared proxy); --builtin-routes says whether COMMAND is given their variables. Forward
// proxying and CONNECT may reach any port, and loopback without a token, unless the config says
// otherwise.
BuiltinProviders add_builtin_providers(config::Config& cfg) {
  BuiltinProviders added;
  std::vector<std::string>& names = added.route_names;
  for (config::ProxyRoute& route : config::builtin_provider_routes()) {
    const bool taken = std::any_of(cfg.proxy.routes.begin(), cfg.proxy.routes.end(), [&](const config::ProxyRoute& r) {
      return r.name == route.name || r.env == route.env;
    });
    if (taken) continue;
    names.push_back(route.name);
    cfg.proxy.routes.push_back(std::move(route));
  }
  for (const std::string_view host : config::builtin_provider_hosts()) {
    if (std::find(cfg.proxy.intercept.begin(), cfg.proxy.intercept.end(), host) == cfg.proxy.intercept.end()) {
      cfg.proxy.intercept.emplace_back(host);
    }
  }
  // A provider the user points the agent at by its base-URL variable (ANTHROPIC_BASE_URL naming
  // Kimi's, MiniMax's or a company gateway's https:// endpoint), in the environment, Gemini CLI's
  // .env or Claude Code's settings files (their `env` block), or in Pi's or Codex's own config
  // files, is the
  // agent's provider: its host is intercepted as the known ones are (before: tunnelled blind, so
  // none of its failures was retried, without a word), but for the hosts left to the config
  // (config::opt_in_provider_hosts). The proxy this launch starts inherits the environment and the
  // working directory, and the config digest covers the intercept list: a launch naming another
  // host gets its own proxy.
  const auto opt_in = [](const std::string& host) {
    const std::vector<std::string_view>& globs = config::opt_in_provider_hosts();
    return std::any_of(globs.begin(), globs.end(),
                       [&host](std::string_view g) { return config::glob_match(g, host, true); });
  };
  for (const GivenUrl& given : base_urls_given()) {
    // An empty value leaves the program on its SDK's default host, which the route leads to too.
    const std::string& variable = given.file_variable.name;
    if (!variable.empty() && !given.url.empty() &&
        std::none_of(added.file_variables.begin(), added.file_variables.end(),
                     [&](const BuiltinProviders::FileVariable& seen) { return seen.name == variable; })) {
      added.file_variables.push_back({variable, core::log_text::escape(given.file_variable.file)});
    }
    const std::optional<core::UrlParts> url = core::split_url(given.url);
    if (!url || url->scheme != "https" || loopback_host(url->host) || opt_in(url->host) ||
        std::find(cfg.proxy.intercept.begin(), cfg.proxy.intercept.end(), url->host) != cfg.proxy.intercept.end()) {
      continue;
    }
    cfg.proxy.intercept.push_back(url->host);
    added.given_hosts.push_back(core::log_text::escape(url->host) + " (" + core::log_text::escape(given.source) + ")");
  }
  // The agent is handed this proxy in HTTPS_PROXY and HTTP_PROXY for every host it does not keep
  // direct, so the proxy must reach whatever the agent reached before: every port (a local
  // network's Ollama on 11434, a gateway on 4000, a cluster on 6443; before: 403 for each), and
  // names that resolve to loopback, which NO_PROXY's loopback entries do not cover (Debian's own
  // host name on 127.0.1.1, a developer's `127.0.0.1 myapp.test` in /etc/hosts; before: 502).
  // Only this user's programs can use it (Server::admit); with proxy.token other users can, so
  // loopback stays closed to them. A config that sets a key keeps it.
  if (cfg.settings_sources.count("proxy.forward.allow_ports") == 0) cfg.proxy.forward.allow_ports.clear();
  if (cfg.settings_sources.count("proxy.forward.allow_loopback") == 0 && cfg.proxy.token.empty()) {
    cfg.proxy.forward.allow_loopback = true;
  }
  return added;
}

}  // namespace curlretry::proxy
