// The `stream:` key of a policy (how a 2xx text/event-stream is held until its first content
// event), read apart from the rest of the loader.
#pragma once

#include <string>

#include "config/config.h"
#include "config/yaml_values.h"
#include "core/policy.h"

namespace curlretry::config {

// Overlays the keys present in the `stream:` map `node` (at dotted `key`) onto `rules`,
// recording each one's origin under "stream.<name>" in `sources`. Throws ConfigError.
void read_stream(const Values& values, const YamlNode& node, const std::string& key, core::StreamRules& rules,
                 Sources& sources);

// The largest hold_max_bytes accepted (a typo must not make a host buffer gigabytes).
inline constexpr long long kMaxHoldBytes = 64LL * 1024 * 1024;

}  // namespace curlretry::config
