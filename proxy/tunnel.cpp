#include "proxy/tunnel.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

#include <chrono>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace curlretry::proxy {

Tunnel::Tunnel(tcp::socket client, std::string early, std::string host, std::string port)
    : client_(std::move(client)),
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
  connect_timer_.expires_after(std::chrono::seconds(30));
  connect_timer_.async_wait([self](boost::system::error_code ec) {
    if (!ec) {
      self->resolver_.cancel();
      boost::system::error_code ignored;
      self->upstream_.close(ignored);
    }
  });
  resolver_.async_resolve(host_, port_, [self](boost::system::error_code ec, tcp::resolver::results_type results) {
    if (ec) {
      self->refuse("cannot resolve " + self->host_ + ": " + ec.message());
      return;
    }
    asio::async_connect(self->upstream_, results, [self](boost::system::error_code ec2, const tcp::endpoint&) {
      self->connect_timer_.cancel();
      if (ec2) self->refuse("cannot connect to " + self->host_ + ":" + self->port_ + ": " + ec2.message());
      else self->connected();
    });
  });
}

void Tunnel::refuse(const std::string& detail) {
  std::string body = "{\"error\":\"curlretry proxy\",\"detail\":\"";
  for (char c : detail) {
    if (c == '"' || c == '\\') body += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) body += c;
  }
  body += "\"}\n";
  reply_ = "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  asio::async_write(client_, asio::buffer(reply_),
                    [self = shared_from_this()](boost::system::error_code, std::size_t) { self->close(); });
}

void Tunnel::connected() {
  reply_ = "HTTP/1.1 200 Connection Established\r\n\r\n";
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
    asio::async_write(*d.to, asio::buffer(d.buffer.data(), n), [self, &d](boost::system::error_code ec2, std::size_t) {
      if (self->closed_) return;
      if (ec2) self->close();
      else self->pump(d);
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

void Tunnel::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  connect_timer_.cancel();
  client_.close(ignored);
  upstream_.close(ignored);
}

}  // namespace curlretry::proxy
