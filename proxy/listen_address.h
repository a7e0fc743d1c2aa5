// `--listen HOST:PORT`: where the proxy accepts connections, and whether that is loopback only.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <optional>
#include <string>

namespace curlretry::proxy {

struct ListenAddress {
  std::optional<boost::asio::ip::tcp::endpoint> endpoint;
  std::string error;
};

// "127.0.0.1:7878", "[::1]:7878", "0.0.0.0:0" (numeric addresses only: no lookup).
ListenAddress parse_listen(const std::string& text);

bool is_loopback(const boost::asio::ip::address& address);

}  // namespace curlretry::proxy
