// Reads the `proxy:` section (config/proxy_settings.h) for the loader.
#pragma once

#include "config/config.h"
#include "config/yaml_tree.h"
#include "config/yaml_values.h"

namespace curlretry::config {

// Throws ConfigError (through `v`) naming file:line:col and the key on anything wrong.
void read_proxy(const Values& v, const YamlNode& node, ProxySettings& out, Sources& sources);

}  // namespace curlretry::config
