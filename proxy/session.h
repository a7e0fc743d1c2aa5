// One client connection: reads HTTP/1.1 requests with Boost.Beast's parser (bounded head and
// body, timeouts against slow clients), answers what the proxy answers itself (health, errors,
// authentication), and runs every routed request as an Exchange, writing its bytes back in
// order with backpressure. While an exchange runs the connection is watched, so a client that
// hangs up takes its upstream transfer with it.
//
// The same code serves a plain connection (tcp_stream) and, after a CONNECT to a
// `proxy.intercept` host, the TLS connection inside it (ssl::stream over the same socket, with a
// leaf from the local CA): there every request goes to https://HOST:PORT + its target.
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "proxy/exchange.h"
#include "proxy/request_rules.h"
#include "proxy/upgrade.h"

namespace curlretry::proxy {

class Server;

// What the Server keeps of a connection, whichever its stream.
class SessionBase : public std::enable_shared_from_this<SessionBase>, public Sink {
 public:
  virtual ~SessionBase() = default;
  virtual void start() = 0;
  // Server shutdown: an idle connection closes now, a busy one after its response.
  virtual void wind_down() = 0;
  // Cuts the connection and its exchange.
  virtual void close() = 0;
  // libcurl finished this session's exchange.
  virtual void exchange_done(CURLcode code) = 0;
  // The Server's periodic sweep: a read or write that outlived its deadline closes the connection.
  virtual void sweep(std::chrono::steady_clock::time_point now) = 0;
  // Accepted over proxy.max_connections: answered 503 at start, then closed (Server::refuse).
  bool over_limit = false;
  // Another local user's connection to a proxy without proxy.token: answered 403 at start, then
  // closed (Server::admit).
  bool foreign = false;
  // The connection of the proxy's own user (or root), as the kernel says: served without
  // proxy.token (Server::admit).
  bool owner = false;
};

// The intercepted side of a CONNECT: the certificate presented, and where requests go.
struct Interception {
  std::shared_ptr<boost::asio::ssl::context> context;
  std::string origin;  // "https://host:port"
  std::string early;   // bytes the client sent after its CONNECT head (the start of its ClientHello)
};

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::asio::ssl::stream<boost::beast::tcp_stream>;

// Where a connection is, as one value (whatever else runs beside it: a write flushing, the
// hang-up watch, a streamed body's read). Changed only by Session::enter(); `closed` is final.
enum class SessionPhase : std::uint8_t {
  opening,         // accepted; inside an intercepted CONNECT, the client's TLS handshake
  reading,         // awaiting the next request or reading one (its head, a body kept whole)
  exchanging,      // the request runs upstream as an Exchange (a streamed body may still come in)
  upgraded,        // a WebSocket carries the connection, or its handshake is under way
  flushing_next,   // the answer is complete here: once its bytes are out, the next request
  flushing_close,  // likewise, then linger and close
  lingering,       // output shut after a closing answer: draining what the client still sends
  closed,          // closed, or the socket handed to a Tunnel or a TLS session
};

template <class Stream>
class Session final : public SessionBase {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  Session(Server& server, boost::asio::ip::tcp::socket socket, Interception interception = {});
  ~Session() override;
  void start() override;
  void wind_down() override;
  void close() override;
  void exchange_done(CURLcode code) override;
  void sweep(std::chrono::steady_clock::time_point now) override;

  // Sink
  void send(std::string bytes) override;
  std::size_t backlog() const override { return pending_.size() + inflight_.size(); }
  bool client_gone() const override { return closed(); }
  void want_body() override;

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  void enter(SessionPhase next) {
    if (phase_ != SessionPhase::closed) phase_ = next;
  }
  bool closed() const { return phase_ == SessionPhase::closed; }
  bool flushing() const { return phase_ == SessionPhase::flushing_next || phase_ == SessionPhase::flushing_close; }
  std::shared_ptr<Session> self_ptr() { return std::static_pointer_cast<Session>(shared_from_this()); }
  boost::beast::tcp_stream& lowest() { return boost::beast::get_lowest_layer(stream_); }
  // Beast's tcp_stream timeouts, kept as plain deadlines that the Server's sweep checks: arming a
  // timer per read and write cost a timer queue update (often a timerfd_settime) each. Same rules
  // as Beast's: a deadline is set for the read or write not under way, and counts while one is.
  void expires_after(std::chrono::milliseconds timeout);
  void expires_never();
  void handshake();
  void read_head();
  void on_head(boost::system::error_code ec);
  void on_request(boost::system::error_code ec);
  void collect_chunked();
  // One read of the request body into chunk() within the body timeout (body_reading_ while it
  // is under way); `then(session, ec, got)` gets the error (Beast's need_buffer, a full chunk, is
  // none) and the bytes read, unless the session closed meanwhile. The one read both body paths
  // (collect_chunked, pump_body) make.
  template <class Then>
  void read_body_chunk(Then then);
  void dispatch(Request& request);
  void answer_health(const Request& request, bool keep_alive);
  // `route`: a configured route's upstream, not a forward or intercepted target (proxy.forward).
  void forward(Request& request, std::string url, bool keep_alive, bool route);
  // A WebSocket handshake (request_rules.h websocket_upgrade): the connection becomes its tunnel.
  void upgrade(Request& request, const std::string& url, bool route);
  void end_upgrade();
  bool forbidden(const Authority& where);
  void tunnel(std::string_view authority);
  void intercept(std::string host, const std::string& port);
  void too_large();
  void malformed(boost::system::error_code ec);
  void respond(int status, const std::string& content_type, const std::string& body, bool close,
               const std::string& extra_headers = "");
  void watch_client();
  void pump_body();
  void start_write();
  void written(boost::system::error_code ec);
  void after_response(bool keep_alive);
  void next_or_close();
  void linger();
  void drain();

  Server& server_;
  Interception interception_;  // before stream_: the TLS stream uses its context
  Stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::unique_ptr<Exchange> exchange_;
  std::shared_ptr<Upgrade> upgrade_;  // while the connection carries a WebSocket (or its handshake)
  // A request body too large to keep: read piece by piece as the upstream transfer takes it.
  bool streaming_ = false;
  std::optional<std::uint64_t> streamed_length_;  // none: chunked, length unknown
  std::optional<boost::beast::http::request_parser<boost::beast::http::buffer_body>> body_parser_;
  std::optional<boost::beast::http::request_header<>> head_;  // a chunked request's head, before its trailer
  std::string collected_;  // a chunked body read so far, while it may still fit max_body
  bool body_reading_ = false;  // a read_body_chunk() is under way
  // Only sessions that stream a body need it: 64 KiB held by every idle keep-alive connection was
  // most of the proxy's memory per idle stream (bench idle row).
  static constexpr std::size_t kChunkSize = 64 * 1024;
  // The longest chunk-size line (extensions included) or trailer section a body may carry
  // (nginx and HAProxy bound both by a buffer of this order).
  static constexpr std::size_t kLineLimit = 16 * 1024;
  std::unique_ptr<char[]> chunk_;
  char* chunk() {
    if (!chunk_) chunk_.reset(new char[kChunkSize]);
    return chunk_.get();
  }
  std::list<std::shared_ptr<SessionBase>>::iterator enrolled_;
  std::string pending_;
  std::string inflight_;
  bool writing_ = false;
  bool watching_ = false;
  SessionPhase phase_ = SessionPhase::opening;
  bool winding_down_ = false;
  bool read_op_ = false;   // a read on stream_ is under way (a Beast op, not watch_client's wait)
  bool write_op_ = false;  // a write on stream_ is under way
  std::chrono::steady_clock::time_point read_deadline_ = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point write_deadline_ = std::chrono::steady_clock::time_point::max();
  std::size_t drained_ = 0;  // bytes discarded while lingering
};

}  // namespace curlretry::proxy
