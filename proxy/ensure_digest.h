// What `--ensure` compares before it reuses a running proxy: a digest of the configuration each
// side runs with, in four parts so a difference can be named. The health answer carries the
// running proxy's parts; --ensure computes its own from the config and environment it would start
// a proxy with. Each part is an HMAC under the identity secret (proxy/identity.h), so the answer,
// which any local user may ask for, tells nothing about the routes' URLs or the settings' values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace curlretry::proxy {

struct ConfigDigest {
  std::string routes;     // proxy.routes: name, upstream, env
  std::string intercept;  // proxy.intercept (built-in providers included when asked for)
  std::string files;      // the config files: names and bytes
  std::string settings;   // the CURLRETRY_* and BILI_REPLAY_* variables (CURLRETRY_CONFIG is `files`)
};

// The digest of `cfg` and `environment` (a NULL-terminated environ); empty parts when `secret` is.
ConfigDigest config_digest(const std::string& secret, const config::Config& cfg, char** environment);

// A short name of the whole digest (12 hex digits) for the files of a proxy that runs this config
// beside the address's own one (proxy/ensure.h): equal for equal digests, "" without a secret.
std::string config_id(const ConfigDigest& digest);

// `,"config":{"routes":"…","intercept":"…","files":"…","settings":"…"}` for the health body; ""
// without a secret.
std::string config_digest_field(const ConfigDigest& digest);

// What differs between `wanted` and the "config" object of a health body, in words for the user:
// "routes", "intercept list", "config files", "CURLRETRY_* settings". A body with no such object
// (a proxy older than this check) differs in everything.
std::vector<std::string> config_differences(const ConfigDigest& wanted, std::string_view health_body);

}  // namespace curlretry::proxy
