// The `fleet:` section of a config file, read with the loader's typed, positioned values.
#pragma once

#include "config/config.h"
#include "config/yaml_tree.h"
#include "config/yaml_values.h"

namespace curlretry::config {

// Overlays the keys present in `node` (the value of `fleet:`) onto `fleet`, recording each key's
// file:line:col in `sources`. Throws ConfigError like every loader read.
void read_fleet_section(const Values& values, const YamlNode& node, FleetSettings& fleet, Sources& sources);

}  // namespace curlretry::config
