// The body of the proxy's health answer (GET /_curlretry/health): what --ensure, --status and
// the tests read of a running proxy (docs/PROXY.md, "Health").
#pragma once

#include <string>
#include <string_view>

namespace curlretry::proxy {

class Server;

// {"status":"ok","pid":..,"connections":..,"active":..[,proof][,config],"routes":[..]}; `nonce`
// is the request's kNonceHeader (proxy/identity.h), answered with a proof when the server has a secret.
std::string health_body(const Server& server, std::string_view nonce);

}  // namespace curlretry::proxy
