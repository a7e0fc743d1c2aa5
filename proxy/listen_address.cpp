#include "proxy/listen_address.h"

#include <charconv>

namespace curlretry::proxy {

ListenAddress parse_listen(const std::string& text) {
  ListenAddress out;
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    out.error = "--listen " + text + ": expected HOST:PORT, e.g. 127.0.0.1:7878";
    return out;
  }
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    out.error = "--listen " + text + ": \"" + port_text + "\" is not a port (0-65535)";
    return out;
  }
  boost::system::error_code bad;
  const auto address = boost::asio::ip::make_address(host, bad);
  if (bad) {
    out.error = "--listen " + text + ": \"" + host + "\" is not a numeric IP address";
    return out;
  }
  out.endpoint = boost::asio::ip::tcp::endpoint(address, static_cast<unsigned short>(port));
  return out;
}

bool is_loopback(const boost::asio::ip::address& address) {
  if (address.is_v4()) return address.to_v4().is_loopback();
  const auto v6 = address.to_v6();
  return v6.is_loopback() ||
         (v6.is_v4_mapped() && boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).is_loopback());
}

}  // namespace curlretry::proxy
