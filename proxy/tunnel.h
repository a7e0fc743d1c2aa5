// A blind CONNECT tunnel: bytes both ways between the client and host:port, nothing read, nothing
// retried (HTTPS through HTTPS_PROXY when the host is not intercepted). The client connection is
// handed over by its Session once the CONNECT head is read. A tunnel counts among the Server's
// connections (max_connections) and closes after proxy.tunnel_idle_ms without a byte either way.
// With proxy.upstream_proxy it is made through that proxy (a CONNECT of its own there).
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <list>
#include <memory>
#include <string>

namespace curlretry::proxy {

class Server;

class Tunnel : public std::enable_shared_from_this<Tunnel> {
 public:
  // `early`: bytes the client sent after its CONNECT head, for the upstream.
  Tunnel(Server& server, boost::asio::ip::tcp::socket client, std::string early, std::string host, std::string port);
  // Enrols with the Server (which holds it until close) and connects.
  void start();
  // The Server's sweep: idle past proxy.tunnel_idle_ms closes it.
  void sweep(std::chrono::steady_clock::time_point now);
  void close();

 private:
  struct Direction {
    boost::asio::ip::tcp::socket* from;
    boost::asio::ip::tcp::socket* to;
    std::array<char, 16 * 1024> buffer{};
    bool done = false;
  };
  // To the target, or to the user's own proxy (then ask_parent): `results` empty when resolving failed.
  void connect(const boost::asio::ip::tcp::resolver::results_type& results);
  void ask_parent();
  // `early_down`: bytes the user's own proxy passed on after its answer, for the client.
  void connected(std::string early_down);
  void refuse(const std::string& detail);
  void pump(Direction& d);
  void finish_direction(Direction& d);

  Server& server_;
  std::list<std::shared_ptr<Tunnel>>::iterator enrolled_;
  std::chrono::steady_clock::time_point active_at_;  // the last byte either way (or the start)
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
