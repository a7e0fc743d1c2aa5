// A blind CONNECT tunnel: bytes both ways between the client and host:port, nothing read, nothing
// retried (HTTPS through HTTPS_PROXY when the host is not intercepted). The client connection is
// handed over by its Session once the CONNECT head is read.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <memory>
#include <string>

namespace curlretry::proxy {

class Tunnel : public std::enable_shared_from_this<Tunnel> {
 public:
  // `early`: bytes the client sent after its CONNECT head, for the upstream.
  Tunnel(boost::asio::ip::tcp::socket client, std::string early, std::string host, std::string port);
  void start();

 private:
  struct Direction {
    boost::asio::ip::tcp::socket* from;
    boost::asio::ip::tcp::socket* to;
    std::array<char, 16 * 1024> buffer{};
    bool done = false;
  };
  void connected();
  void refuse(const std::string& detail);
  void pump(Direction& d);
  void finish_direction(Direction& d);
  void close();

  boost::asio::ip::tcp::socket client_;
  boost::asio::ip::tcp::socket upstream_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer connect_timer_;
  std::string early_;
  std::string host_;
  std::string port_;
  std::string reply_;
  Direction up_;    // client -> upstream
  Direction down_;  // upstream -> client
  bool closed_ = false;
};

}  // namespace curlretry::proxy
