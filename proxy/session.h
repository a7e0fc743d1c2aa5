// One client connection: reads HTTP/1.1 requests with Boost.Beast's parser (bounded head and
// body, timeouts against slow clients), answers what the proxy answers itself (health, errors,
// authentication), and runs every routed request as an Exchange, writing its bytes back in
// order with backpressure. While an exchange runs the connection is watched, so a client that
// hangs up takes its upstream transfer with it.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/string_body.hpp>

#include <array>

#include <list>
#include <memory>
#include <optional>
#include <string>

#include "proxy/exchange.h"

namespace curlretry::proxy {

class Server;

class Session : public std::enable_shared_from_this<Session>, public Sink {
 public:
  Session(Server& server, boost::asio::ip::tcp::socket socket);
  ~Session();
  void start();
  // Server shutdown: an idle connection closes now, a busy one after its response.
  void wind_down();
  // Cuts the connection and its exchange.
  void close();
  // libcurl finished this session's exchange.
  void exchange_done(CURLcode code);

  // Sink
  void send(std::string bytes) override;
  std::size_t backlog() const override { return pending_.size() + inflight_.size(); }
  bool client_gone() const override { return closed_; }
  void want_body() override;

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  void read_head();
  void on_head(boost::system::error_code ec);
  void on_request(boost::system::error_code ec);
  void dispatch(Request& request);
  void forward(Request& request, std::string url, bool keep_alive);
  void tunnel(std::string_view authority);
  void too_large();
  void malformed(boost::system::error_code ec);
  void respond(int status, const std::string& content_type, const std::string& body, bool close,
               const std::string& extra_headers = "");
  void watch_client();
  void pump_body();
  void start_write();
  void after_response(bool keep_alive);
  void next_or_close();
  void linger();
  void drain();

  Server& server_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::unique_ptr<Exchange> exchange_;
  // A request body too large to keep: read piece by piece as the upstream transfer takes it.
  bool streaming_ = false;
  std::optional<boost::beast::http::request_parser<boost::beast::http::buffer_body>> body_parser_;
  bool body_reading_ = false;
  std::array<char, 64 * 1024> chunk_{};
  std::list<std::shared_ptr<Session>>::iterator enrolled_;
  std::string pending_;
  std::string inflight_;
  bool writing_ = false;
  bool watching_ = false;
  bool closed_ = false;
  bool reading_ = false;
  bool winding_down_ = false;
  std::size_t drained_ = 0;  // bytes discarded while lingering
  enum class After { nothing, next, close } after_ = After::nothing;  // once the output is flushed
};

}  // namespace curlretry::proxy
