// What a Session does with a request once it is read: the token, then where it goes (a route, a
// forward target, CONNECT: an intercepted TLS session or a blind tunnel, the health answer), each
// under proxy.forward's limits when it is not a configured route.
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>

#include "proxy/health.h"
#include "proxy/identity.h"
#include "proxy/request_rules.h"
#include "proxy/route_target.h"
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
  if (!o.settings.token.empty() && !owner &&
      !same_secret(presented_token(request[http::field::proxy_authorization]), o.settings.token)) {
    respond(407, "application/json", "{\"error\":\"proxy authentication required\"}\n", !keep_alive,
            "Proxy-Authenticate: Bearer realm=\"curlretry\"\r\nProxy-Authenticate: Basic realm=\"curlretry\"\r\n");
    return;
  }
  if (request.method() == http::verb::connect) {
    tunnel(request.target());
    return;
  }
  RouteTarget target = route_target(o.settings.routes, request.target());
  switch (target.kind) {
    case RouteTarget::Kind::refused:
      respond(target.status, "application/json", target.body, target.close || !keep_alive);
      return;
    case RouteTarget::Kind::health: answer_health(request, keep_alive); return;
    case RouteTarget::Kind::forward:
      if (!forbidden(target.where)) forward(request, std::move(target.url), keep_alive, /*route=*/false);
      return;
    case RouteTarget::Kind::route: forward(request, std::move(target.url), keep_alive, /*route=*/true); return;
  }
}

template <class Stream>
void Session<Stream>::answer_health(const Request& request, bool keep_alive) {
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    respond(405, "application/json", "{\"error\":\"method not allowed\"}\n", !keep_alive, "Allow: GET, HEAD\r\n");
    return;
  }
  const std::string body = health_body(server_, request[kNonceHeader]);
  respond(200, "application/json", request.method() == http::verb::head ? "" : body, !keep_alive);
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
    enter(SessionPhase::closed);  // the socket is the tunnel's now
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
      respond(502, "application/json", error_body(error), true);
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
    enter(SessionPhase::closed);  // the socket is the TLS session's now
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
template void Session<PlainStream>::answer_health(const Request&, bool);
template void Session<TlsStream>::answer_health(const Request&, bool);

}  // namespace curlretry::proxy
