#include "proxy/health.h"

#include <unistd.h>

#include "proxy/identity.h"
#include "proxy/request_rules.h"
#include "proxy/server.h"

namespace curlretry::proxy {

std::string health_body(const Server& server, std::string_view nonce) {
  const ServerOptions& o = server.options();
  std::string body = "{\"status\":\"ok\",\"pid\":" + std::to_string(::getpid()) +
                     ",\"connections\":" + std::to_string(server.connections()) +
                     ",\"active\":" + std::to_string(server.active_exchanges()) +
                     health_proof_field(o.identity_secret,
                                        o.listen.address().to_string() + ":" + std::to_string(server.port()), nonce) +
                     o.config_digest + ",\"routes\":[";
  for (std::size_t i = 0; i < o.settings.routes.size(); ++i) {
    body += (i ? "," : "") + json_string(o.settings.routes[i].name);
  }
  body += "]}\n";
  return body;
}

}  // namespace curlretry::proxy
