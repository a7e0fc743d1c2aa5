// Human-readable values of a policy and settings, keyed like config::Sources ("backoff.base_ms"),
// so `check` can print each value next to where it came from.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/config.h"

namespace curlretry::cli {

using KeyValues = std::vector<std::pair<std::string, std::string>>;  // in display order

KeyValues describe_policy(const core::Policy& policy);
KeyValues describe_settings(const config::Settings& settings);
// A rule's `fallback` and `auth`, when set (the credential command's arguments are not shown).
KeyValues describe_agent(const config::Rule& rule);

// "machine store; a retry takes a token, given back if it succeeds; each success earns 10% of one, ...",
// or "off".
std::string describe_fleet(const config::FleetSettings& fleet);

// "host open.bigmodel.cn, path /api/*, method POST", or "every request".
std::string describe_match(const config::Match& match);

}  // namespace curlretry::cli
