// The listening side: accepts client connections (one Session each), owns the libcurl loop
// they share, answers /_curlretry/health, and shuts down on request: no new connections, idle
// ones closed, in-flight responses given a grace period to finish, then cut.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "config/config.h"
#include "config/proxy_settings.h"
#include "core/policy.h"
#include "proxy/curl_loop.h"
#include "proxy/parent_proxy.h"

namespace curlretry::proxy {

class SessionBase;
class LocalCa;
class Tunnel;

struct ServerOptions {
  boost::asio::ip::tcp::endpoint listen;
  config::ProxySettings settings;
  bool require_token = false;
  std::chrono::milliseconds header_timeout{30000};  // whole request head, from its first byte
  std::chrono::milliseconds idle_timeout{60000};    // between requests on a kept-alive connection
  std::chrono::milliseconds body_timeout{300000};
  std::chrono::milliseconds write_stall{120000};  // a client that reads nothing for this long is gone
  std::chrono::milliseconds shutdown_grace{10000};
  // Client connections served at once (proxy/connection_limit.h decides it from the config and
  // the open-files limit); the next ones are answered 503 (Server::refuse).
  std::size_t max_connections = 4096;
  std::size_t header_limit = 64 * 1024;
  std::shared_ptr<LocalCa> ca;  // loaded when settings.intercept is not empty
  std::string identity_secret;  // proxy/identity.h: what health proves to --ensure; empty = no proof
  std::string config_digest;    // proxy/ensure_digest.h: health's "config" field, "" without a secret
  // The whole config: the policy a WebSocket handshake is judged under (proxy/upgrade.h). Null:
  // the built-in defaults.
  std::shared_ptr<const config::Config> config;
};

class Server {
 public:
  Server(boost::asio::io_context& io, ServerOptions options);
  ~Server();
  unsigned short port() const { return port_; }
  void start();
  // First call: graceful; `grace_over` (or a second call) cuts what is left and stops the loop.
  void shutdown();

  const ServerOptions& options() const { return options_; }
  CurlLoop& loop() { return loop_; }
  std::size_t active_exchanges() const { return active_; }
  // Client connections: sessions (plain and intercepted) and blind tunnels, all under
  // max_connections; not the ones being answered 503 for being over it.
  std::size_t connections() const { return sessions_.size() + tunnels_.size() - refusing_; }
  // Connections over max_connections answered 503 with Retry-After at once; past as many at once
  // the proxy stops accepting until one ends (the kernel's listen queue holds the rest, as
  // HAProxy does at its maxconn), so the descriptors they take stay bounded.
  static constexpr std::size_t kRefusalSlots = 32;
  bool stopping() const { return stopping_; }
  // CONNECT to `host`: TLS-terminated (a proxy.intercept glob matches) or a blind tunnel.
  bool intercepts(const std::string& host) const;
  // The context presenting a leaf for `host`; nullptr and `error` when it cannot be made.
  std::shared_ptr<boost::asio::ssl::context> tls_context(const std::string& host, std::string* error);

  // proxy.upstream_proxy, read once at start: where tunnels and upgrades connect instead of their
  // target (libcurl is handed the URL itself). nullopt: upstreams are reached directly.
  const std::optional<ParentProxy>& parent() const { return parent_; }
  // A tunnel the parent would not make for host:port: said on stderr (the proxy's log), at most
  // every kRefusalLogPeriod, without the parent's URL (it may carry a password).
  void parent_refused(const TunnelRefusal& refusal, const std::string& host, const std::string& port);

  // The retry policy for a request the proxy judges itself (a WebSocket handshake, proxy/upgrade.h).
  const core::Policy& policy_for(std::string_view method, std::string_view host, std::string_view path) const;
  // The client context for an upgrade's TLS upstream: the system store plus
  // proxy.upstream_ca_file, peer verified, ALPN http/1.1; made once. nullptr and `error` on failure.
  std::shared_ptr<boost::asio::ssl::context> upstream_tls(std::string* error);

  // Sessions report in and out, and count their exchanges.
  std::list<std::shared_ptr<SessionBase>>::iterator enrol(std::shared_ptr<SessionBase> session);
  void leave(std::list<std::shared_ptr<SessionBase>>::iterator where);
  std::list<std::shared_ptr<Tunnel>>::iterator enrol(std::shared_ptr<Tunnel> tunnel);
  void leave(std::list<std::shared_ptr<Tunnel>>::iterator where);
  void exchange_started() { ++active_; }
  void exchange_ended();

 private:
  void accept();
  // A connection over max_connections: answered 503 by a session of its own, and said in a
  // warning line at most every kRefusalLogPeriod.
  void refuse(boost::asio::ip::tcp::socket socket);
  // Who may use this proxy without proxy.token: its own user and root, as ssh-agent serves only
  // its own user. The proxy carries its user's fleet store, config and credentials (auth.command
  // and the credential it caches), so another local user's connection would act with them. False:
  // the connection was answered 403 (another user's) or closed (its peer already let go of it).
  // With proxy.token set, whoever presents it may (Session::dispatch): the token is the sharing.
  // `*owner`: the kernel says the connection is this proxy's user's (or root's), which needs no
  // token: the launcher hands COMMAND the proxy's URL without one (a URL with credentials is
  // refused by fetch), and the user can read it in the config anyway.
  bool admit(boost::asio::ip::tcp::socket& socket, bool* owner);
  void resume_accept();
  void stop_now();
  void arm_sweep();

  // Sessions' read and write deadlines are checked this often (a timeout fires up to one period
  // late): an eighth of the shortest timeout, within 10..250 ms.
  std::chrono::milliseconds sweep_period() const;

  boost::asio::io_context& io_;
  ServerOptions options_;
  CurlLoop loop_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer grace_;
  boost::asio::steady_timer sweep_;  // runs while there are sessions
  bool sweeping_ = false;
  std::list<std::shared_ptr<SessionBase>> sessions_;  // owned here until they close
  std::list<std::shared_ptr<Tunnel>> tunnels_;        // likewise
  std::shared_ptr<boost::asio::ssl::context> upstream_tls_;
  std::optional<ParentProxy> parent_;
  std::uint64_t parent_refusals_ = 0;  // tunnels the parent would not make since the start
  std::chrono::steady_clock::time_point next_parent_log_{};
  core::Policy default_policy_;
  std::size_t active_ = 0;
  std::size_t refusing_ = 0;   // sessions answering 503 (in sessions_, over_limit)
  std::uint64_t refused_ = 0;  // connections answered 503 since the start
  std::chrono::steady_clock::time_point next_refusal_log_{};
  static constexpr std::chrono::seconds kRefusalLogPeriod{10};
  std::uint64_t foreign_ = 0;  // connections of other users answered 403 since the start
  std::chrono::steady_clock::time_point next_foreign_log_{};
  bool said_unknown_peer_ = false;  // the kernel could not say who connected: said once
  bool accept_paused_ = false;  // kRefusalSlots in use: no async_accept under way
  unsigned short port_ = 0;
  bool stopping_ = false;
};

}  // namespace curlretry::proxy
