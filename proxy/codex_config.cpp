#include "proxy/codex_config.h"

#include <toml++/toml.h>

#include <cstdlib>

#include "proxy/agent_file.h"

namespace curlretry::proxy {
namespace {


}  // namespace

std::string codex_home_file(std::string_view name) {
  const char* codex_home = std::getenv("CODEX_HOME");
  const char* home = std::getenv("HOME");
  if (codex_home != nullptr && *codex_home != '\0') return std::string(codex_home) + "/" + std::string(name);
  if (home != nullptr && *home != '\0') return std::string(home) + "/.codex/" + std::string(name);
  return {};
}

std::vector<std::string> codex_provider_base_urls(std::string_view config_toml) {
  std::vector<std::string> out;
  toml::table config;
  try {
    config = toml::parse(config_toml);
  } catch (const toml::parse_error&) {
    return out;
  }
  if (const std::optional<std::string> url = config["openai_base_url"].value<std::string>()) out.push_back(*url);
  if (const toml::table* providers = config["model_providers"].as_table()) {
    for (const auto& [name, provider] : *providers) {
      if (const toml::table* table = provider.as_table()) {
        if (const std::optional<std::string> url = (*table)["base_url"].value<std::string>()) out.push_back(*url);
      }
    }
  }
  return out;
}

std::vector<std::string> codex_config_base_urls() {
  const std::string file = codex_home_file("config.toml");
  if (file.empty()) return {};
  const std::string text = read_agent_file(file);
  if (text.empty()) return {};
  return codex_provider_base_urls(text);
}

}  // namespace curlretry::proxy
