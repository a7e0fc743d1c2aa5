#include "proxy/tunnel.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <chrono>

#include "proxy/exchange.h"
#include "proxy/request_rules.h"
#include "proxy/server.h"

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace curlretry::proxy {

Tunnel::Tunnel(Server& server, tcp::socket client, std::string early, std::string host, std::string port)
    : server_(server),
      active_at_(std::chrono::steady_clock::now()),
      client_(std::move(client)),
      upstream_(client_.get_executor()),
      resolver_(client_.get_executor()),
      connect_timer_(client_.get_executor()),
      early_(std::move(early)),
      host_(std::move(host)),
      port_(std::move(port)) {
  up_.from = &client_;
  up_.to = &upstream_;
  down_.from = &upstream_;
  down_.to = &client_;
}

void Tunnel::start() {
  auto self = shared_from_this();
  enrolled_ = server_.enrol(self);
  connect_timer_.expires_after(std::chrono::seconds(30));
  connect_timer_.async_wait([self](boost::system::error_code ec) {
    if (!ec) {
      self->resolver_.cancel();
      boost::system::error_code ignored;
      self->upstream_.close(ignored);
    }
  });
  // Through the user's own proxy, the connection is to it (their choice, loopback or not) and it
  // is asked for the tunnel; the target's name is resolved there.
  const std::optional<ParentProxy>& parent = server_.parent();
  resolver_.async_resolve(parent ? parent->host : host_, parent ? parent->port : port_,
                          [self](boost::system::error_code ec, tcp::resolver::results_type results) {
                            if (self->closed_) return;
                            self->connect(ec ? tcp::resolver::results_type() : results);
                          });
}

void Tunnel::connect(const tcp::resolver::results_type& results) {
  const bool direct = !server_.parent();
  // Whichever failed (no such name, refused, filtered, a loopback address refused here), the
  // client hears the same: a CONNECT is no port scanner.
  std::vector<tcp::endpoint> allowed;
  for (const auto& entry : results) {
    const tcp::endpoint& endpoint = entry.endpoint();
    if (!direct || server_.options().settings.forward.allow_loopback || !loopback_address(endpoint.data())) {
      allowed.push_back(endpoint);
    }
  }
  if (allowed.empty()) {
    connect_timer_.cancel();
    refuse(kUnreachable);
    return;
  }
  asio::async_connect(upstream_, allowed,
                      [self = shared_from_this(), direct](boost::system::error_code ec, const tcp::endpoint&) {
                        if (self->closed_) return;
                        if (ec) {
                          self->connect_timer_.cancel();
                          self->refuse(kUnreachable);
                        } else if (direct) {
                          self->connect_timer_.cancel();
                          self->connected({});
                        } else {
                          self->ask_parent();
                        }
                      });
}

// The connect timer still runs: a parent that never answers is cut like an upstream that never
// accepts.
void Tunnel::ask_parent() {
  async_tunnel_through(upstream_, *server_.parent(), host_, port_,
                       [self = shared_from_this()](std::optional<TunnelRefusal> refusal, std::string early) {
                         self->connect_timer_.cancel();
                         if (self->closed_) return;
                         if (refusal) {
                           self->server_.parent_refused(*refusal, self->host_, self->port_);
                           self->refuse(kUnreachable);
                         } else {
                           self->connected(std::move(early));
                         }
                       });
}

void Tunnel::refuse(const std::string& detail) {
  const std::string body = error_body(detail);
  reply_ =
      "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  asio::async_write(client_, asio::buffer(reply_),
                    [self = shared_from_this()](boost::system::error_code, std::size_t) { self->close(); });
}

void Tunnel::connected(std::string early_down) {
  reply_ = "HTTP/1.1 200 Connection Established\r\n\r\n" + early_down;
  auto self = shared_from_this();
  asio::async_write(client_, asio::buffer(reply_), [self](boost::system::error_code ec, std::size_t) {
    if (ec) {
      self->close();
      return;
    }
    asio::async_write(self->upstream_, asio::buffer(self->early_), [self](boost::system::error_code ec2, std::size_t) {
      if (ec2) {
        self->close();
        return;
      }
      self->pump(self->up_);
      self->pump(self->down_);
    });
  });
}

void Tunnel::pump(Direction& d) {
  auto self = shared_from_this();
  d.from->async_read_some(asio::buffer(d.buffer), [self, &d](boost::system::error_code ec, std::size_t n) {
    if (self->closed_) return;
    if (ec) {
      self->finish_direction(d);
      return;
    }
    self->active_at_ = std::chrono::steady_clock::now();
    asio::async_write(*d.to, asio::buffer(d.buffer.data(), n), [self, &d](boost::system::error_code ec2, std::size_t) {
      if (self->closed_) return;
      if (ec2)
        self->close();
      else
        self->pump(d);
    });
  });
}

// One side finished sending: the other hears end of stream, and the tunnel lives until both have.
void Tunnel::finish_direction(Direction& d) {
  d.done = true;
  boost::system::error_code ignored;
  d.to->shutdown(tcp::socket::shutdown_send, ignored);
  if (up_.done && down_.done) close();
}

void Tunnel::sweep(std::chrono::steady_clock::time_point now) {
  if (now - active_at_ >= std::chrono::milliseconds(server_.options().settings.tunnel_idle_ms)) close();
}

void Tunnel::close() {
  if (closed_) return;
  auto self = shared_from_this();  // the Server's reference goes below
  closed_ = true;
  boost::system::error_code ignored;
  connect_timer_.cancel();
  resolver_.cancel();
  client_.close(ignored);
  upstream_.close(ignored);
  server_.leave(enrolled_);
}

}  // namespace curlretry::proxy
