// The proxy of the user's own that every upstream is reached through (proxy.upstream_proxy,
// config/upstream_proxy.h), as the proxy's Asio sides use it: a blind tunnel (proxy/tunnel.h) and a
// WebSocket upgrade (proxy/upgrade.h) connect to it and ask it for a tunnel to their target with
// an HTTP CONNECT, as libcurl does for the proxy's own requests (CURLOPT_PROXY, proxy/exchange.cpp).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <optional>
#include <string>

namespace curlretry::proxy {

struct ParentProxy {
  std::string host;           // no brackets
  std::string port;           // 1080 when the URL names none, libcurl's default for a proxy
  std::string authorization;  // "Basic …" from the URL's user and password (decoded), or ""
};

// The proxy `url` names, read by libcurl's URL parser (the same reading CURLOPT_PROXY gets);
// nullopt for "" or a URL libcurl cannot read (config/ has refused anything else before).
std::optional<ParentProxy> parent_proxy(const std::string& url);

// What the parent answered when the tunnel did not stand: its status ("answered 407"), or what
// went wrong on the way ("closed the connection"). The target's name is the caller's to add.
struct TunnelRefusal {
  std::string why;
  int status = 0;  // the parent's status when it answered, else 0
};

// On `socket`, connected to `parent`: sends CONNECT host:port and reads the answer's head (at most
// kAnswerHeadLimit). `done(nullopt, early)` once the tunnel stands, `early` being bytes the parent
// passed on after its answer (already the target's); `done(refusal, "")` otherwise. The socket
// must outlive the operation (its owner closes it to cancel, done then gets a refusal).
inline constexpr std::size_t kAnswerHeadLimit = 16 * 1024;
void async_tunnel_through(boost::asio::ip::tcp::socket& socket, const ParentProxy& parent, const std::string& host,
                          const std::string& port,
                          std::function<void(std::optional<TunnelRefusal>, std::string early)> done);

}  // namespace curlretry::proxy
