// The YAML of the careful-client keys: `match.header`, a rule's `fallback:` and `auth:`, and
// `settings.persistent` / `settings.heartbeat_ms`. Errors throw ConfigError like the rest of the
// loader (file:line:col: key: problem).
#pragma once

#include <string>
#include <string_view>

#include "config/config.h"
#include "config/yaml_values.h"

namespace curlretry::config {


// `match.header: {NAME: GLOB, ...}`.
std::vector<HeaderMatch> read_header_match(const Values& v, const YamlNode& node, const std::string& key);
// `fallback: {after, on, model, url}`.
Fallback read_fallback(const Values& v, const YamlNode& node, const std::string& key);
// `auth: {on, command, header, timeout_ms}`.
AuthRefresh read_auth(const Values& v, const YamlNode& node, const std::string& key);
bool read_agent_setting(const Values& v, std::string_view name, const YamlNode& value, const std::string& key,
                        Settings& settings);

}  // namespace curlretry::config
