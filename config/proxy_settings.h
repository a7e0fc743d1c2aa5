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

// Where forward proxying (absolute-form http:// targets) and CONNECT may go. Routes are not
// limited by it: their upstreams are the config's own choice.
struct ProxyForward {
  std::vector<unsigned> allow_ports{80, 443};  // empty: any port
  // Loopback targets (127.0.0.0/8, ::1, the unspecified address, "localhost") reach services
  // that trust local connections; they are refused unless the config says otherwise.
  bool allow_loopback = false;
};

struct ProxySettings {
  std::vector<ProxyRoute> routes;
  std::string token;                        // required of clients (Proxy-Authorization: Bearer) when not on loopback
  std::size_t max_body = 16 * 1024 * 1024;  // largest request body kept for replay
  // CONNECT to a host matching one of these globs is TLS-terminated with a leaf from the local CA
  // (`curlretry proxy ca`) so its requests go through the retry engine; other CONNECTs are tunnels.
  std::vector<std::string> intercept;
  // Extra trust anchors for the proxy's upstream TLS (a private CA, the tests' upstream), in
  // addition to the system store; verification itself is never switched off.
  std::string upstream_ca_file;
  // A proxy of the user's own every upstream is reached through (config/upstream_proxy.h): "" for
  // direct. Names are resolved by that proxy, so proxy.forward's loopback check sees literals only.
  std::string upstream_proxy;
  ProxyForward forward;
  // A CONNECT tunnel (blind) with no byte either way for this long is closed.
  long long tunnel_idle_ms = 300000;
  // Client connections (sessions and tunnels) open at once; one more is answered 503 with
  // Retry-After. 0: derived at start from the open-files limit (proxy/connection_limit.h).
  std::size_t max_connections = 0;
};

}  // namespace curlretry::config
