// Where a request on a plain connection goes, from its target alone: a configured route (the
// first path segment names it), forward proxying (an absolute-form http:// URL), the proxy's
// health answer, or an error answer of the proxy's own. Pure: the Session applies the token,
// CONNECT and proxy.forward's limits around it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/proxy_settings.h"
#include "proxy/request_rules.h"

namespace curlretry::proxy {

inline constexpr std::string_view kHealthPath = "/_curlretry/health";

struct RouteTarget {
  enum class Kind { route, forward, health, refused } kind = Kind::refused;
  std::string url;    // route and forward: where the request goes
  Authority where;    // forward: its host and port, for proxy.forward
  int status = 0;     // refused: the answer
  std::string body;   // refused: its JSON body
  bool close = true;  // refused: the connection closes after it even when kept alive
};

RouteTarget route_target(const std::vector<config::ProxyRoute>& routes, std::string_view target);

}  // namespace curlretry::proxy
