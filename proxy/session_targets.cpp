// What a Session does with a request once it is read: the token, then where it goes (a route, a
// forward target, CONNECT: an intercepted TLS session or a blind tunnel, the health answer), each
// under proxy.forward's limits when it is not a configured route.
#include <unistd.h>

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>

#include "proxy/identity.h"
#include "proxy/request_rules.h"
#include "proxy/server.h"
#include "proxy/session.h"
#include "proxy/tunnel.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace curlretry::proxy {

template <class Stream>
void Session<Stream>::dispatch(Request& request) {
  const ServerOptions& o = server_.options();
  const bool keep_alive = request.keep_alive() && !winding_down_;
  if constexpr (kTls) {
    // Inside an intercepted CONNECT (authenticated when it was made): every request is for its host.
    if (request.method() == http::verb::connect || request.target().empty() || request.target()[0] != '/') {
      respond(400, "application/json",
              "{\"error\":\"inside an intercepted CONNECT the target must be an origin-form path\"}\n", true);
      return;
    }
    forward(request, interception_.origin + std::string(request.target()), keep_alive, /*route=*/false);
    return;
  }
  if (!o.settings.token.empty() &&
      !same_secret(presented_token(request[http::field::proxy_authorization]), o.settings.token)) {
    respond(407, "application/json", "{\"error\":\"proxy authentication required\"}\n", !keep_alive,
            "Proxy-Authenticate: Bearer realm=\"curlretry\"\r\nProxy-Authenticate: Basic realm=\"curlretry\"\r\n");
    return;
  }
  const std::string_view target = request.target();
  if (request.method() == http::verb::connect) {
    tunnel(target);
    return;
  }
  // Forward proxying of plain HTTP (`curl -x`, HTTP_PROXY): the absolute-form target is the URL.
  // (https:// targets come as CONNECT.)
  if (target.size() > 7 && beast::iequals(target.substr(0, 7), "http://")) {
    const std::string_view authority = target.substr(7, target.find_first_of("/?#", 7) - 7);
    const auto where = parse_authority(authority, 80);
    if (!where) {
      respond(400, "application/json",
              "{\"error\":\"absolute-form target without a valid host (a DNS name or an IP literal), or with "
              "credentials\"}\n",
              true);
      return;
    }
    if (forbidden(*where)) return;
    forward(request, std::string(target), keep_alive, /*route=*/false);
    return;
  }
  if (target.empty() || target[0] != '/') {
    respond(400, "application/json", "{\"error\":\"the target must be /ROUTE/... or an absolute http:// URL\"}\n",
            true);
    return;
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/_curlretry/health") {
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      respond(405, "application/json", "{\"error\":\"method not allowed\"}\n", !keep_alive, "Allow: GET, HEAD\r\n");
      return;
    }
    std::string body =
        "{\"status\":\"ok\",\"pid\":" + std::to_string(::getpid()) +
        ",\"connections\":" + std::to_string(server_.connections()) +
        ",\"active\":" + std::to_string(server_.active_exchanges()) +
        health_proof_field(o.identity_secret, o.listen.address().to_string() + ":" + std::to_string(server_.port()),
                           request[kNonceHeader]) +
        o.config_digest + ",\"routes\":[";
    for (std::size_t i = 0; i < o.settings.routes.size(); ++i) {
      body += (i ? "," : "") + json_string(o.settings.routes[i].name);
    }
    body += "]}\n";
    respond(200, "application/json", request.method() == http::verb::head ? "" : body, !keep_alive);
    return;
  }
  const std::size_t name_end = std::min(target.find_first_of("/?", 1), target.size());
  const std::string_view name = target.substr(1, name_end - 1);
  const config::ProxyRoute* route = nullptr;
  for (const auto& r : o.settings.routes) {
    if (r.name == name) route = &r;
  }
  if (route == nullptr) {
    respond(404, "application/json", "{\"error\":\"no route\",\"route\":" + json_string(name) + "}\n", !keep_alive);
    return;
  }
  // CURLOPT_PATH_AS_IS sends the path as it is: its dot-segments are resolved here, and one that
  // would climb above the route's base is refused.
  std::optional<std::string> rest = route_rest(target.substr(name_end));
  if (!rest) {
    respond(400, "application/json", "{\"error\":\"the path climbs above the route's base (\\\"..\\\")\"}\n", true);
    return;
  }
  if (rest->empty() || (*rest)[0] == '?') *rest = "/" + *rest;
  forward(request, route->upstream + *rest, keep_alive, /*route=*/true);
}

// CONNECT host:port: TLS-terminated for a proxy.intercept host (its requests are retried), a
// blind tunnel for any other (nothing in it can be read, so nothing is retried). Either way the
// connection leaves this session.
template <class Stream>
void Session<Stream>::tunnel(std::string_view authority) {
  // Validated before any glob sees it: the host becomes a certificate's name if intercepted.
  const auto where = parse_authority(authority, 0);
  if (!where) {
    respond(400, "application/json", "{\"error\":\"CONNECT needs host:port, the host a DNS name or an IP literal\"}\n",
            true);
    return;
  }
  if (forbidden(*where)) return;
  std::string host = where->host;
  const std::string port = std::to_string(where->port);
  if (server_.stopping()) {
    respond(503, "application/json", "{\"error\":\"the proxy is shutting down\"}\n", true);
    return;
  }
  if constexpr (!kTls) {
    if (server_.intercepts(host)) {
      intercept(std::move(host), port);
      return;
    }
    std::string early = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    expires_never();
    auto handed = std::make_shared<Tunnel>(server_, stream_.release_socket(), std::move(early), std::move(host), port);
    handed->start();
    closed_ = true;  // the socket is the tunnel's now
    server_.leave(enrolled_);
  }
}

template <class Stream>
void Session<Stream>::intercept(std::string host, const std::string& port) {
  if constexpr (!kTls) {
    std::string error;
    Interception interception;
    interception.context = server_.tls_context(host, &error);
    if (!interception.context) {
      respond(502, "application/json", "{\"error\":\"curlretry proxy\",\"detail\":" + json_string(error) + "}\n", true);
      return;
    }
    const bool v6 = host.find(':') != std::string::npos;
    interception.origin = "https://" + (v6 ? "[" + host + "]" : host) + ":" + port;
    interception.early = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    expires_never();
    // The answer goes out in the clear, before the handshake; nothing else is queued (requests on
    // a connection are answered in order and this one is the last in the clear).
    static const std::string kEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n";
    boost::system::error_code ec;
    asio::write(lowest().socket(), asio::buffer(kEstablished), ec);
    closed_ = true;  // the socket is the TLS session's now
    if (!ec) {
      std::make_shared<Session<TlsStream>>(server_, lowest().release_socket(), std::move(interception))->start();
    }
    server_.leave(enrolled_);
  }
}

// proxy.forward, for forward proxying and CONNECT: a port it does not list, or a loopback
// literal, is answered 403 (a name that resolves to loopback is refused at connect time).
template <class Stream>
bool Session<Stream>::forbidden(const Authority& where) {
  const config::ProxyForward& rules = server_.options().settings.forward;
  if (!port_allowed(rules, where.port)) {
    respond(403, "application/json",
            "{\"error\":\"port " + std::to_string(where.port) + " is not in proxy.forward.allow_ports\"}\n", true);
    return true;
  }
  if (!rules.allow_loopback && loopback_host(where.host)) {
    respond(403, "application/json", "{\"error\":\"loopback targets need proxy.forward.allow_loopback\"}\n", true);
    return true;
  }
  return false;
}

// The other members are instantiated in session.cpp with the class.
template void Session<PlainStream>::dispatch(Request&);
template void Session<TlsStream>::dispatch(Request&);

}  // namespace curlretry::proxy
