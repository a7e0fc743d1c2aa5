#include "proxy/server.h"

#include <openssl/ssl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <iostream>
#include <vector>

#include "config/glob.h"
#include "core/log_text.h"
#include "proxy/exchange.h"
#include "proxy/local_ca.h"
#include "proxy/session.h"
#include "proxy/socket_owner.h"
#include "proxy/tunnel.h"

namespace asio = boost::asio;

namespace curlretry::proxy {

Server::Server(asio::io_context& io, ServerOptions options)
    : io_(io),
      options_(std::move(options)),
      loop_(io),
      acceptor_(io),
      grace_(io),
      sweep_(io),
      parent_(parent_proxy(options_.settings.upstream_proxy)) {
  loop_.on_done = [](CURL* easy, CURLcode code) {
    char* data = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &data);
    auto* exchange = reinterpret_cast<Exchange*>(data);
    if (exchange != nullptr) static_cast<SessionBase*>(exchange->owner())->exchange_done(code);
  };
}

Server::~Server() {
  stopping_ = true;
  for (const auto& tunnel : std::vector<std::shared_ptr<Tunnel>>(tunnels_.begin(), tunnels_.end())) tunnel->close();
  for (const auto& session : std::vector<std::shared_ptr<SessionBase>>(sessions_.begin(), sessions_.end())) {
    session->close();
  }
}

void Server::start() {
  acceptor_.open(options_.listen.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(options_.listen);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
  accept();
}

void Server::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
    if (stopping_) return;
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      // Out of descriptors (EMFILE): wait a little rather than spin on the pending connection.
      grace_.expires_after(std::chrono::milliseconds(50));
      grace_.async_wait([this](boost::system::error_code e) {
        if (!e && !stopping_) accept();
      });
      return;
    }
    // Heads and bodies leave in separate writes: Nagle would hold the second for the client's
    // delayed ACK (40 ms a response).
    boost::system::error_code ignored;
    socket.set_option(asio::ip::tcp::no_delay(true), ignored);
    bool owner = false;
    if (!admit(socket, &owner)) {
      // answered 403 or closed: not a connection of this proxy's user
    } else if (connections() >= options_.max_connections) {
      refuse(std::move(socket));
    } else {
      auto session = std::make_shared<Session<PlainStream>>(*this, std::move(socket));
      session->owner = owner;
      session->start();
    }
    if (refusing_ >= kRefusalSlots) {
      accept_paused_ = true;  // resume_accept() when a connection ends
      return;
    }
    accept();
  });
}

// A 503 with Retry-After is an answer every HTTP client and LLM SDK retries on its own (and
// curlretry's classifier too), where a connection closed unanswered reads as a network failure
// and a connection left waiting in the listen queue as a hang for as long as a stream lasts.
// (Envoy's overload manager answers 503 likewise; HAProxy queues, which this proxy does only past
// kRefusalSlots.) The client's request is not read: the answer goes first, then the session
// drains what the client sends and closes (Session::linger).
void Server::refuse(asio::ip::tcp::socket socket) {
  const std::size_t open = connections();
  ++refusing_;
  ++refused_;
  auto session = std::make_shared<Session<PlainStream>>(*this, std::move(socket));
  session->over_limit = true;
  const auto now = std::chrono::steady_clock::now();
  const bool say = !options_.config || options_.config->settings.log_level >= config::LogLevel::warn;
  if (say && now >= next_refusal_log_) {
    next_refusal_log_ = now + kRefusalLogPeriod;
    std::cerr << "curlretry: proxy: warning: " << open << " connections open, proxy.max_connections is "
              << options_.max_connections << ": new ones are answered 503 with Retry-After: 1 until one closes ("
              << refused_ << " so far; this line at most every " << kRefusalLogPeriod.count() << " s)\n";
  }
  session->start();
}

bool Server::admit(asio::ip::tcp::socket& socket, bool* owner) {
  const Peer peer = connected_peer(socket.native_handle());
  const uid_t me = ::geteuid();
  *owner = peer.kind == Peer::Kind::socket && peer.held && (peer.uid == me || peer.uid == 0);
  if (*owner || !options_.settings.token.empty()) return true;
  if (peer.kind == Peer::Kind::unknown) {
    if (!said_unknown_peer_) {
      said_unknown_peer_ = true;
      std::cerr << "curlretry: proxy: warning: the kernel cannot say which user connected (no sock_diag): any local "
                   "user can use this proxy, with your fleet store and credentials; set proxy.token to require one\n";
    }
    return true;
  }
  boost::system::error_code ignored;
  if (peer.kind == Peer::Kind::gone || !peer.held) {
    // Closed before it was accepted: nobody is there to answer, and its request is nobody's.
    socket.close(ignored);
    return false;
  }
  ++foreign_;
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_foreign_log_) {
    next_foreign_log_ = now + kRefusalLogPeriod;
    std::cerr << "curlretry: proxy: refused a connection from uid " << peer.uid << ": this proxy serves uid " << me
              << " only (set proxy.token to share it) (" << foreign_ << " so far; this line at most every "
              << kRefusalLogPeriod.count() << " s)\n";
  }
  auto session = std::make_shared<Session<PlainStream>>(*this, std::move(socket));
  session->foreign = true;
  session->start();
  return false;
}

void Server::resume_accept() {
  if (!accept_paused_ || stopping_ || refusing_ >= kRefusalSlots) return;
  accept_paused_ = false;
  accept();
}

std::list<std::shared_ptr<SessionBase>>::iterator Server::enrol(std::shared_ptr<SessionBase> session) {
  auto where = sessions_.insert(sessions_.end(), std::move(session));
  arm_sweep();
  return where;
}

std::list<std::shared_ptr<Tunnel>>::iterator Server::enrol(std::shared_ptr<Tunnel> tunnel) {
  auto where = tunnels_.insert(tunnels_.end(), std::move(tunnel));
  arm_sweep();
  return where;
}

void Server::leave(std::list<std::shared_ptr<Tunnel>>::iterator where) {
  tunnels_.erase(where);
  resume_accept();
}

std::chrono::milliseconds Server::sweep_period() const {
  using std::chrono::milliseconds;
  const milliseconds shortest =
      std::min({options_.header_timeout, options_.idle_timeout, options_.body_timeout, options_.write_stall,
                milliseconds(options_.settings.tunnel_idle_ms), milliseconds(2000) /* Session::linger */});
  return std::clamp(shortest / 8, milliseconds(10), milliseconds(250));
}

void Server::arm_sweep() {
  if (sweeping_) return;
  sweeping_ = true;
  sweep_.expires_after(sweep_period());
  sweep_.async_wait([this](boost::system::error_code ec) {
    sweeping_ = false;
    if (ec) return;
    const auto now = std::chrono::steady_clock::now();
    // A session that closes leaves the list: step past it first.
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      auto session = *it++;
      session->sweep(now);
    }
    for (auto it = tunnels_.begin(); it != tunnels_.end();) {
      auto tunnel = *it++;
      tunnel->sweep(now);
    }
    if (!sessions_.empty() || !tunnels_.empty()) arm_sweep();
  });
}

void Server::leave(std::list<std::shared_ptr<SessionBase>>::iterator where) {
  if ((*where)->over_limit) --refusing_;
  sessions_.erase(where);
  resume_accept();
  if (stopping_ && sessions_.empty()) asio::post(io_, [this] { stop_now(); });
}

bool Server::intercepts(const std::string& host) const {
  for (const auto& glob : options_.settings.intercept) {
    if (config::glob_match(glob, host, true)) return true;
  }
  return false;
}

std::shared_ptr<asio::ssl::context> Server::tls_context(const std::string& host, std::string* error) {
  if (!options_.ca) {
    *error = "no local CA loaded";
    return nullptr;
  }
  return options_.ca->context_for(host, error);
}

void Server::exchange_ended() {
  if (active_ > 0) --active_;
}

const core::Policy& Server::policy_for(std::string_view method, std::string_view host, std::string_view path) const {
  return options_.config ? options_.config->policy_for(method, host, path) : default_policy_;
}

void Server::parent_refused(const TunnelRefusal& refusal, const std::string& host, const std::string& port) {
  ++parent_refusals_;
  const bool say = !options_.config || options_.config->settings.log_level >= config::LogLevel::warn;
  const auto now = std::chrono::steady_clock::now();
  if (!say || now < next_parent_log_) return;
  next_parent_log_ = now + kRefusalLogPeriod;
  // host and port passed the Session's checks (a host name or an IP literal, digits); escaped
  // anyway, as every line of the network's text is (core/log_text.h).
  std::cerr << "curlretry: proxy: warning: your proxy (proxy.upstream_proxy) " << refusal.why << " for "
            << core::log_text::escape(host) << ":" << core::log_text::escape(port) << " (" << parent_refusals_
            << " so far; this line at most every " << kRefusalLogPeriod.count() << " s)\n";
}

std::shared_ptr<asio::ssl::context> Server::upstream_tls(std::string* error) {
  if (upstream_tls_) return upstream_tls_;
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  boost::system::error_code ec;
  context->set_default_verify_paths(ec);
  const std::string& extra = options_.settings.upstream_ca_file;
  if (!ec && !extra.empty()) context->load_verify_file(extra, ec);
  if (ec) {
    *error = "cannot load the trust store: " + ec.message();
    return nullptr;
  }
  context->set_verify_mode(asio::ssl::verify_peer);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A WebSocket is an HTTP/1.1 upgrade: an upstream must not pick h2.
  static const unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof kAlpn);
  upstream_tls_ = std::move(context);
  return upstream_tls_;
}

void Server::shutdown() {
  if (stopping_) {
    stop_now();
    return;
  }
  stopping_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  grace_.cancel();
  for (const auto& session : std::vector<std::shared_ptr<SessionBase>>(sessions_.begin(), sessions_.end())) {
    session->wind_down();
  }
  if (sessions_.empty()) {
    stop_now();
    return;
  }
  grace_.expires_after(options_.shutdown_grace);
  grace_.async_wait([this](boost::system::error_code ec) {
    if (!ec) stop_now();
  });
}

void Server::stop_now() {
  grace_.cancel();
  sweep_.cancel();
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& tunnel : std::vector<std::shared_ptr<Tunnel>>(tunnels_.begin(), tunnels_.end())) tunnel->close();
  for (const auto& session : std::vector<std::shared_ptr<SessionBase>>(sessions_.begin(), sessions_.end())) {
    session->close();
  }
  io_.stop();
}

}  // namespace curlretry::proxy
