#include "proxy/parent_proxy.h"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <memory>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace curlretry::proxy {
namespace {

// One part of a parsed URL, decoded; "" when absent.
std::string part(CURLU* url, CURLUPart which, unsigned flags) {
  char* text = nullptr;
  if (curl_url_get(url, which, &text, flags) != CURLUE_OK || text == nullptr) return {};
  std::string out(text);
  curl_free(text);
  return out;
}

std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  return out;
}

// What one CONNECT holds until its answer is read.
struct Asking {
  Asking(asio::ip::tcp::socket& s, std::function<void(std::optional<TunnelRefusal>, std::string)> d)
      : socket(s), done(std::move(d)) {}
  asio::ip::tcp::socket& socket;
  std::string request;
  beast::flat_buffer buffer{kAnswerHeadLimit};
  http::response_parser<http::empty_body> parser;
  std::function<void(std::optional<TunnelRefusal>, std::string)> done;
};

}  // namespace

std::optional<ParentProxy> parent_proxy(const std::string& url) {
  if (url.empty()) return std::nullopt;
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> parsed(curl_url(), &curl_url_cleanup);
  // No scheme is http://, as libcurl reads a proxy URL.
  if (!parsed || curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), CURLU_DEFAULT_SCHEME) != CURLUE_OK) {
    return std::nullopt;
  }
  ParentProxy out;
  out.host = part(parsed.get(), CURLUPART_HOST, 0);
  if (out.host.size() > 2 && out.host.front() == '[') out.host = out.host.substr(1, out.host.size() - 2);
  out.port = part(parsed.get(), CURLUPART_PORT, 0);
  if (out.port.empty()) out.port = "1080";
  if (out.host.empty()) return std::nullopt;
  const std::string user = part(parsed.get(), CURLUPART_USER, CURLU_URLDECODE);
  const std::string password = part(parsed.get(), CURLUPART_PASSWORD, CURLU_URLDECODE);
  // libcurl sends Basic for a proxy URL's credentials unless told otherwise (CURLOPT_PROXYAUTH).
  if (!user.empty() || !password.empty()) out.authorization = "Basic " + base64(user + ":" + password);
  return out;
}

void async_tunnel_through(asio::ip::tcp::socket& socket, const ParentProxy& parent, const std::string& host,
                          const std::string& port,
                          std::function<void(std::optional<TunnelRefusal>, std::string)> done) {
  auto asking = std::make_shared<Asking>(socket, std::move(done));
  // An IPv6 literal in brackets, as the authority form of a request target writes it.
  const std::string authority = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
  asking->request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  if (!parent.authorization.empty()) asking->request += "Proxy-Authorization: " + parent.authorization + "\r\n";
  asking->request += "\r\n";
  asking->parser.header_limit(static_cast<std::uint32_t>(kAnswerHeadLimit));
  // A 2xx to CONNECT has no body (RFC 9110 9.3.6): what follows its head is the target's.
  asking->parser.skip(true);
  asio::async_write(socket, asio::buffer(asking->request), [asking](boost::system::error_code ec, std::size_t) {
    if (ec) {
      asking->done(TunnelRefusal{"closed the connection before the CONNECT was sent", 0}, {});
      return;
    }
    http::async_read_header(
        asking->socket, asking->buffer, asking->parser, [asking](boost::system::error_code ec2, std::size_t) {
          if (ec2) {
            asking->done(TunnelRefusal{"sent no answer to CONNECT it could be read from", 0}, {});
            return;
          }
          const int status = asking->parser.get().result_int();
          if (status / 100 != 2) {
            asking->done(TunnelRefusal{"answered " + std::to_string(status) + " to CONNECT", status}, {});
            return;
          }
          const auto rest = asking->buffer.data();
          asking->done(std::nullopt, std::string(static_cast<const char*>(rest.data()), rest.size()));
        });
  });
}

}  // namespace curlretry::proxy
