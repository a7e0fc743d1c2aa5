// The `proxy:` section of the config file: what `curlretry proxy` serves. The retry policy of
// each proxied request is the ordinary one (defaults, rules, env): the proxy has no policy keys.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace curlretry::config {

struct ProxyRoute {
  std::string name;      // the first path segment: http://127.0.0.1:7878/<name>/...
  std::string upstream;  // "https://api.anthropic.com" or "http://host:port/prefix", no trailing '/'
  std::string env;       // the variable a program reads its base URL from, e.g. ANTHROPIC_BASE_URL
};

struct ProxySettings {
  std::vector<ProxyRoute> routes;
  std::string token;  // required of clients (Proxy-Authorization: Bearer) when not on loopback
  std::size_t max_body = 16 * 1024 * 1024;  // largest request body kept for replay
};

}  // namespace curlretry::config
