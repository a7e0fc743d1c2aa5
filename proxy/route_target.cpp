#include "proxy/route_target.h"

#include <algorithm>
#include <optional>

#include "core/ascii.h"

namespace curlretry::proxy {
namespace {

RouteTarget refused(int status, std::string body, bool close) {
  RouteTarget out;
  out.status = status;
  out.body = std::move(body);
  out.close = close;
  return out;
}

}  // namespace

RouteTarget route_target(const std::vector<config::ProxyRoute>& routes, std::string_view target) {
  RouteTarget out;
  // Forward proxying of plain HTTP (`curl -x`, HTTP_PROXY): the absolute-form target is the URL.
  // (https:// targets come as CONNECT.)
  if (target.size() > 7 && core::ascii::istarts_with(target, "http://")) {
    const std::string_view authority = target.substr(7, target.find_first_of("/?#", 7) - 7);
    const auto where = parse_authority(authority, 80);
    if (!where) {
      return refused(400,
                     "{\"error\":\"absolute-form target without a valid host (a DNS name or an IP literal), or with "
                     "credentials\"}\n",
                     true);
    }
    out.kind = RouteTarget::Kind::forward;
    out.where = *where;
    out.url = std::string(target);
    return out;
  }
  if (target.empty() || target[0] != '/') {
    return refused(400, "{\"error\":\"the target must be /ROUTE/... or an absolute http:// URL\"}\n", true);
  }
  if (target.substr(0, target.find('?')) == kHealthPath) {
    out.kind = RouteTarget::Kind::health;
    return out;
  }
  const std::size_t name_end = std::min(target.find_first_of("/?", 1), target.size());
  const std::string_view name = target.substr(1, name_end - 1);
  const auto route =
      std::find_if(routes.begin(), routes.end(), [&](const config::ProxyRoute& r) { return r.name == name; });
  if (route == routes.end())
    return refused(404, "{\"error\":\"no route\",\"route\":" + json_string(name) + "}\n", false);
  // CURLOPT_PATH_AS_IS sends the path as it is: its dot-segments are resolved here, and one that
  // would climb above the route's base is refused.
  std::optional<std::string> rest = route_rest(target.substr(name_end));
  if (!rest) return refused(400, "{\"error\":\"the path climbs above the route's base (\\\"..\\\")\"}\n", true);
  if (rest->empty() || (*rest)[0] == '?') *rest = "/" + *rest;
  out.kind = RouteTarget::Kind::route;
  out.url = route->upstream + *rest;
  return out;
}

}  // namespace curlretry::proxy
