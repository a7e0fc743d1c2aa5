#include "proxy/session.h"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include <cerrno>
#include <limits>

#include "proxy/headers.h"
#include "proxy/identity.h"
#include "proxy/server.h"
#include "proxy/tunnel.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace curlretry::proxy {
namespace {

bool same_secret(std::string_view given, std::string_view expected) {
  // Constant time in the secret's length: the comparison leaks nothing but a length mismatch.
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  }
  return diff == 0;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

}  // namespace

template <>
Session<PlainStream>::Session(Server& server, asio::ip::tcp::socket socket, Interception)
    : server_(server), stream_(std::move(socket)) {}

template <>
Session<TlsStream>::Session(Server& server, asio::ip::tcp::socket socket, Interception interception)
    : server_(server), interception_(std::move(interception)), stream_(std::move(socket), *interception_.context) {}

template <class Stream>
Session<Stream>::~Session() = default;

template <class Stream>
void Session<Stream>::start() {
  enrolled_ = server_.enrol(self_ptr());
  if constexpr (kTls) handshake();
  else read_head();
}

// The CONNECT was answered by the plain session; the client's TLS handshake comes now, under the
// head's deadline. Anything but a ClientHello fails it and closes the connection: nothing was
// sent upstream.
template <class Stream>
void Session<Stream>::handshake() {
  if constexpr (kTls) {
    expires_after(server_.options().header_timeout);
    read_op_ = true;
    stream_.async_handshake(asio::ssl::stream_base::server, asio::buffer(interception_.early),
                            [self = self_ptr()](beast::error_code ec, std::size_t) {
                              self->read_op_ = false;
                              if (self->closed_) return;
                              self->interception_.early.clear();
                              if (ec) {
                                self->close();
                                return;
                              }
                              self->read_head();
                            });
  }
}

template <class Stream>
void Session<Stream>::read_head() {
  if (closed_) return;
  if (winding_down_) {
    close();
    return;
  }
  const ServerOptions& o = server_.options();
  reading_ = true;
  if (buffer_.size() == 0) {
    // Idle between requests (or before the first): the head's own deadline starts at its first byte.
    expires_after(o.idle_timeout);
    read_op_ = true;
    stream_.async_read_some(buffer_.prepare(4096), [self = self_ptr()](beast::error_code ec, std::size_t n) {
      self->read_op_ = false;
      self->reading_ = false;
      if (self->closed_) return;
      if (ec) {
        self->close();
        return;
      }
      self->buffer_.commit(n);
      self->read_head();
    });
    return;
  }
  parser_.emplace();
  body_parser_.reset();
  collected_.clear();
  streamed_length_.reset();
  parser_->header_limit(static_cast<std::uint32_t>(o.header_limit));
  // A Content-Length above max_body streams (on_head); a chunked body is kept up to max_body.
  // (Not boost::none: Beast 1.74 compares the length with the empty optional, and everything is "too large".)
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  streaming_ = false;
  // The whole head is usually in the buffer already (the idle read took it): parsed here, as
  // async_read_header would, but without its posted completion (a scheduler round per request).
  beast::error_code ec;
  buffer_.consume(parser_->put(buffer_.data(), ec));
  if (ec ? ec != http::error::need_more : parser_->is_header_done()) {
    on_head(ec);
    return;
  }
  // One deadline for the whole head: a client trickling it byte by byte gains nothing.
  expires_after(o.header_timeout);
  read_op_ = true;
  http::async_read_header(stream_, buffer_, *parser_, [self = self_ptr()](beast::error_code ec, std::size_t) {
    self->read_op_ = false;
    self->on_head(ec);
  });
}

template <class Stream>
void Session<Stream>::malformed(beast::error_code ec) {
  respond(400, "application/json", "{\"error\":\"malformed request\",\"detail\":" + json_string(ec.message()) + "}\n",
          true);
}

template <class Stream>
void Session<Stream>::too_large() {
  respond(413, "application/json",
          "{\"error\":\"request body too large\",\"limit\":" + std::to_string(server_.options().settings.max_body) +
              "}\n",
          true);
}

template <class Stream>
void Session<Stream>::on_head(beast::error_code ec) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
        ec == asio::ssl::error::stream_truncated) {
      close();
    } else if (ec == beast::error::timeout) {
      close();  // beast closed the socket already: nothing can be answered
    } else if (ec == http::error::body_limit) {
      too_large();  // its Content-Length says so: nothing of it is read
    } else if (ec == http::error::header_limit) {
      respond(431, "application/json", "{\"error\":\"request head too large\"}\n", true);
    } else {
      malformed(ec);
    }
    return;
  }
  auto& request = parser_->get();
  const auto length = parser_->content_length();
  const std::uint64_t max_body = server_.options().settings.max_body;
  streaming_ = length && *length > max_body;
  if (streaming_) streamed_length_ = *length;
  if (!streaming_) parser_->body_limit(max_body);
  if (beast::iequals(request[http::field::expect], "100-continue") && !parser_->is_done()) {
    send("HTTP/1.1 100 Continue\r\n\r\n");
  }
  if (streaming_) {
    expires_never();
    dispatch(request);
    return;
  }
  if (parser_->chunked() && !parser_->is_done()) {
    // Kept (and replayable) while it fits max_body; past that it streams, length unknown.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    body_parser_.emplace(std::move(*parser_));
    collect_chunked();
    return;
  }
  if (parser_->is_done()) {
    on_request({});
    return;
  }
  reading_ = true;
  expires_after(server_.options().body_timeout);
  read_op_ = true;
  http::async_read(stream_, buffer_, *parser_, [self = self_ptr()](beast::error_code ec2, std::size_t) {
    self->read_op_ = false;
    self->on_request(ec2);
  });
}

template <class Stream>
void Session<Stream>::collect_chunked() {
  reading_ = true;
  auto& body = body_parser_->get().body();
  body.data = chunk();
  body.size = kChunkSize;
  body.more = true;
  expires_after(server_.options().body_timeout);
  read_op_ = true;
  http::async_read_some(stream_, buffer_, *body_parser_, [self = self_ptr()](beast::error_code ec, std::size_t) {
    self->read_op_ = false;
    self->reading_ = false;
    if (self->closed_) return;
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      self->on_request(ec);
      return;
    }
    self->collected_.append(self->chunk_.get(), kChunkSize - self->body_parser_->get().body().size);
    const bool done = self->body_parser_->is_done();
    const bool over = self->collected_.size() > self->server_.options().settings.max_body;
    if (!done && !over) {
      self->collect_chunked();
      return;
    }
    Request request(self->body_parser_->get().base());
    if (over) {
      // The part read so far goes first (forward() feeds it), the rest as the upstream takes it.
      self->streaming_ = true;
      if (!done) self->expires_never();
    } else {
      self->expires_never();
      request.body() = std::move(self->collected_);
      self->collected_.clear();
    }
    self->dispatch(request);
  });
}

template <class Stream>
void Session<Stream>::on_request(beast::error_code ec) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    if (ec == http::error::body_limit) {
      too_large();
    } else if (ec == beast::error::timeout || ec == http::error::partial_message || ec == asio::error::eof ||
               ec == http::error::end_of_stream || ec == asio::error::connection_reset) {
      close();
    } else {
      malformed(ec);
    }
    return;
  }
  expires_never();
  dispatch(parser_->get());
}

template <class Stream>
void Session<Stream>::dispatch(Request& request) {
  const ServerOptions& o = server_.options();
  const bool keep_alive = request.keep_alive() && !winding_down_;
  if constexpr (kTls) {
    // Inside an intercepted CONNECT (authenticated when it was made): every request is for its host.
    if (request.method() == http::verb::connect || request.target().empty() || request.target()[0] != '/') {
      respond(400, "application/json",
              "{\"error\":\"inside an intercepted CONNECT the target must be an origin-form path\"}\n", true);
      return;
    }
    forward(request, interception_.origin + std::string(request.target()), keep_alive);
    return;
  }
  if (!o.settings.token.empty()) {
    const std::string expected = "Bearer " + o.settings.token;
    if (!same_secret(request[http::field::proxy_authorization], expected)) {
      respond(407, "application/json", "{\"error\":\"proxy authentication required\"}\n", !keep_alive,
              "Proxy-Authenticate: Bearer realm=\"curlretry\"\r\n");
      return;
    }
  }
  const std::string_view target = request.target();
  if (request.method() == http::verb::connect) {
    tunnel(target);
    return;
  }
  // Forward proxying of plain HTTP (`curl -x`, HTTP_PROXY): the absolute-form target is the URL.
  // (https:// targets come as CONNECT.)
  if (target.size() > 7 && beast::iequals(target.substr(0, 7), "http://")) {
    if (target.size() == 7 || target[7] == '/' || target.find_first_of("@", 7) < target.find('/', 7)) {
      respond(400, "application/json", "{\"error\":\"absolute-form target without a host, or with credentials\"}\n",
              true);
      return;
    }
    forward(request, std::string(target), keep_alive);
    return;
  }
  if (target.empty() || target[0] != '/') {
    respond(400, "application/json",
            "{\"error\":\"the target must be /ROUTE/... or an absolute http:// URL\"}\n", true);
    return;
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/_curlretry/health") {
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      respond(405, "application/json", "{\"error\":\"method not allowed\"}\n", !keep_alive, "Allow: GET, HEAD\r\n");
      return;
    }
    std::string body = "{\"status\":\"ok\",\"pid\":" + std::to_string(::getpid()) +
                       ",\"connections\":" + std::to_string(server_.connections()) +
                       ",\"active\":" + std::to_string(server_.active_exchanges()) +
                       health_proof_field(o.identity_secret, o.listen.address().to_string() + ":" +
                                                                 std::to_string(server_.port()),
                                          request[kNonceHeader]) +
                       ",\"routes\":[";
    for (std::size_t i = 0; i < o.settings.routes.size(); ++i) {
      body += (i ? "," : "") + json_string(o.settings.routes[i].name);
    }
    body += "]}\n";
    respond(200, "application/json", request.method() == http::verb::head ? "" : body, !keep_alive);
    return;
  }
  const std::size_t name_end = std::min(target.find_first_of("/?", 1), target.size());
  const std::string_view name = target.substr(1, name_end - 1);
  const config::ProxyRoute* route = nullptr;
  for (const auto& r : o.settings.routes) {
    if (r.name == name) route = &r;
  }
  if (route == nullptr) {
    respond(404, "application/json", "{\"error\":\"no route\",\"route\":" + json_string(name) + "}\n", !keep_alive);
    return;
  }
  std::string rest(target.substr(name_end));
  if (rest.empty() || rest[0] == '?') rest = "/" + rest;
  forward(request, route->upstream + rest, keep_alive);
}

// CONNECT host:port: TLS-terminated for a proxy.intercept host (its requests are retried), a
// blind tunnel for any other (nothing in it can be read, so nothing is retried). Either way the
// connection leaves this session.
template <class Stream>
void Session<Stream>::tunnel(std::string_view authority) {
  const std::size_t colon = authority.rfind(':');
  std::string host(authority.substr(0, colon == std::string_view::npos ? 0 : colon));
  const std::string port(colon == std::string_view::npos ? "" : authority.substr(colon + 1));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const bool port_ok = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
  if (host.empty() || !port_ok) {
    respond(400, "application/json", "{\"error\":\"CONNECT needs host:port\"}\n", true);
    return;
  }
  if (server_.stopping()) {
    respond(503, "application/json", "{\"error\":\"the proxy is shutting down\"}\n", true);
    return;
  }
  if constexpr (!kTls) {
    if (server_.intercepts(host)) {
      intercept(std::move(host), port);
      return;
    }
    std::string early = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    expires_never();
    auto handed = std::make_shared<Tunnel>(stream_.release_socket(), std::move(early), std::move(host), port);
    handed->start();
    closed_ = true;  // the socket is the tunnel's now
    server_.leave(enrolled_);
  }
}

template <class Stream>
void Session<Stream>::intercept(std::string host, const std::string& port) {
  if constexpr (!kTls) {
    std::string error;
    Interception interception;
    interception.context = server_.tls_context(host, &error);
    if (!interception.context) {
      respond(502, "application/json", "{\"error\":\"curlretry proxy\",\"detail\":" + json_string(error) + "}\n", true);
      return;
    }
    const bool v6 = host.find(':') != std::string::npos;
    interception.origin = "https://" + (v6 ? "[" + host + "]" : host) + ":" + port;
    interception.early = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    expires_never();
    // The answer goes out in the clear, before the handshake; nothing else is queued (requests on
    // a connection are answered in order and this one is the last in the clear).
    static const std::string kEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n";
    boost::system::error_code ec;
    asio::write(lowest().socket(), asio::buffer(kEstablished), ec);
    closed_ = true;  // the socket is the TLS session's now
    if (!ec) {
      std::make_shared<Session<TlsStream>>(server_, lowest().release_socket(), std::move(interception))->start();
    }
    server_.leave(enrolled_);
  }
}

template <class Stream>
void Session<Stream>::forward(Request& request, std::string url, bool keep_alive) {
  if (server_.stopping()) {
    respond(503, "application/json", "{\"error\":\"the proxy is shutting down\"}\n", true);
    return;
  }
  UpstreamRequest up;
  up.method = std::string(request.method_string());
  up.url = std::move(url);
  std::vector<std::string> listed = connection_tokens(request[http::field::connection]);
  for (const auto& field : request) {
    const std::string_view field_name = field.name_string();
    if (hop_by_hop(field_name, listed) || iequals(field_name, "host") || iequals(field_name, "content-length") ||
        iequals(field_name, "expect") || iequals(field_name, "accept-encoding")) {  // libcurl negotiates
      continue;
    }
    up.headers.emplace_back(std::string(field_name), std::string(field.value()));
  }
  up.has_body = request.has_content_length() || request.chunked();
  up.streamed = streaming_;
  if (streaming_) up.streamed_length = streamed_length_;
  else up.body = std::move(request.body());
  up.ca_file = server_.options().settings.upstream_ca_file;
  up.client_http11 = request.version() >= 11;
  up.client_keep_alive = keep_alive;

  exchange_ = std::make_unique<Exchange>(server_.loop(), *this, std::move(up), static_cast<SessionBase*>(this));
  if (!exchange_->start()) {
    exchange_.reset();
    respond(502, "application/json", "{\"error\":\"libcurl refused the transfer\"}\n", !keep_alive);
    return;
  }
  server_.exchange_started();
  if (streaming_) {
    if (!body_parser_) body_parser_.emplace(std::move(*parser_));
    if (!collected_.empty()) {
      exchange_->feed(collected_.data(), collected_.size(), body_parser_->is_done());
      collected_.clear();
      collected_.shrink_to_fit();
    }
    pump_body();
  } else {
    watch_client();
  }
}

template <class Stream>
void Session<Stream>::want_body() {
  // Called from libcurl's read callback: only starts a read, never calls libcurl.
  pump_body();
}

template <class Stream>
void Session<Stream>::pump_body() {
  if (closed_ || body_reading_ || !body_parser_ || body_parser_->is_done() || !exchange_) return;
  if (exchange_->upload_backlog() >= Exchange::kHighWater) return;  // want_body() comes back for more
  body_reading_ = true;
  auto& body = body_parser_->get().body();
  body.data = chunk();
  body.size = kChunkSize;
  body.more = true;
  expires_after(server_.options().body_timeout);
  read_op_ = true;
  http::async_read_some(stream_, buffer_, *body_parser_, [self = self_ptr()](beast::error_code ec, std::size_t) {
    self->read_op_ = false;
    self->body_reading_ = false;
    if (self->closed_) return;
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      self->close();  // a client that stops sending its body takes the transfer along
      return;
    }
    const std::size_t got = kChunkSize - self->body_parser_->get().body().size;
    const bool done = self->body_parser_->is_done();
    if (done) self->expires_never();
    if (self->exchange_) self->exchange_->feed(self->chunk_.get(), got, done);
    if (done) self->watch_client();
    else self->pump_body();
  });
}

// A client that hangs up mid-exchange: its transfer goes. A readable socket that is not at its
// end carries a pipelined request; that one waits its turn in the kernel, unwatched.
template <class Stream>
void Session<Stream>::watch_client() {
  if (watching_ || closed_ || !exchange_) return;
  watching_ = true;
  lowest().socket().async_wait(asio::ip::tcp::socket::wait_read, [self = self_ptr()](beast::error_code ec) {
    self->watching_ = false;
    if (self->closed_ || !self->exchange_) return;
    if (ec) {
      self->close();
      return;
    }
    char probe;
    const ssize_t n = ::recv(self->lowest().socket().native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      self->close();
    } else if (n < 0) {
      self->watch_client();
    }
  });
}

template <class Stream>
void Session<Stream>::exchange_done(CURLcode code) {
  auto self = self_ptr();
  if (!exchange_) return;
  bool keep_alive = exchange_->finish(code);
  exchange_.reset();
  // An answer before the whole streamed body arrived: the rest of it cannot be told from a next request.
  if (streaming_ && !(body_parser_ && body_parser_->is_done())) keep_alive = false;
  if (streaming_) {
    streaming_ = false;
    body_parser_.reset();
  }
  server_.exchange_ended();
  after_response(keep_alive);
}

template <class Stream>
void Session<Stream>::respond(int status, const std::string& content_type, const std::string& body, bool close,
                      const std::string& extra_headers) {
  if (streaming_ && !(body_parser_ && body_parser_->is_done())) close = true;  // its body is still coming
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " +
                    std::string(http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)))) + "\r\n";
  out += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  out += extra_headers;
  if (close) out += "Connection: close\r\n";
  out += "\r\n" + body;
  send(std::move(out));
  after_response(!close);
}

template <class Stream>
void Session<Stream>::after_response(bool keep_alive) {
  after_ = keep_alive && !winding_down_ ? After::next : After::close;
  if (!writing_ && pending_.empty()) next_or_close();
}

template <class Stream>
void Session<Stream>::next_or_close() {
  const After after = after_;
  after_ = After::nothing;
  if (after == After::next) read_head();
  else if (after == After::close) linger();
}

// A close with request bytes still unread (an early 413, a 400) would make the kernel answer them
// with a reset that can destroy the response before the client reads it: stop sending, drain
// what still comes for a short while, then close.
template <class Stream>
void Session<Stream>::linger() {
  if (closed_) return;
  if (body_reading_) {
    close();  // a streamed body's read is under way: no second reader on the connection
    return;
  }
  beast::error_code ignored;
  lowest().socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  expires_after(std::chrono::seconds(2));
  drain();
}

template <class Stream>
void Session<Stream>::drain() {
  read_op_ = true;
  stream_.async_read_some(buffer_.prepare(64 * 1024), [self = self_ptr()](beast::error_code ec, std::size_t n) {
    self->read_op_ = false;
    if (self->closed_) return;
    self->drained_ += n;
    self->buffer_.consume(self->buffer_.size());
    if (ec || self->drained_ > 16 * 1024 * 1024) self->close();
    else self->drain();
  });
}

template <class Stream>
void Session<Stream>::send(std::string bytes) {
  if (closed_) return;
  pending_ += bytes;
  if (writing_) return;
  // The write starts once libcurl's call is over: a response's head, body and end that libcurl
  // hands over in one go leave in one write (one syscall) instead of one each, in the same turn
  // of the loop (a posted write cost the reactor one more epoll_wait). writing_ holds the
  // session (next request, wind-down) as a running write would.
  writing_ = true;
  server_.loop().defer([self = self_ptr()] {
    if (self->closed_) {
      self->writing_ = false;
      return;
    }
    self->start_write();
  });
}

template <class Stream>
void Session<Stream>::start_write() {
  inflight_.swap(pending_);
  pending_.clear();
  writing_ = true;
  if constexpr (!kTls) {
    // The socket nearly always takes it all at once: then the write is over within this turn,
    // with no posted completion (one scheduler round and its epoll_wait less per response).
    const ssize_t n = ::send(lowest().socket().native_handle(), inflight_.data(), inflight_.size(),
                             MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(inflight_.size())) {
      written({});
      return;
    }
    if (n > 0) {
      inflight_.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      written(beast::error_code(errno, boost::system::system_category()));
      return;
    }
  }
  expires_after(server_.options().write_stall);
  write_op_ = true;
  asio::async_write(stream_, asio::buffer(inflight_), [self = self_ptr()](beast::error_code ec, std::size_t) {
    self->write_op_ = false;
    self->written(ec);
  });
}

template <class Stream>
void Session<Stream>::written(beast::error_code ec) {
  writing_ = false;
  inflight_.clear();
  if (closed_) return;
  if (ec) {
    close();
    return;
  }
  if (exchange_ && backlog() < Exchange::kLowWater) exchange_->drained();
  if (!writing_ && !pending_.empty()) start_write();
  if (!writing_ && !closed_) {
    if (!reading_) expires_never();
    if (after_ != After::nothing) next_or_close();
  }
}

template <class Stream>
void Session<Stream>::expires_after(std::chrono::milliseconds timeout) {
  const auto when = std::chrono::steady_clock::now() + timeout;
  if (!read_op_) read_deadline_ = when;
  if (!write_op_) write_deadline_ = when;
}

template <class Stream>
void Session<Stream>::expires_never() {
  if (!read_op_) read_deadline_ = std::chrono::steady_clock::time_point::max();
  if (!write_op_) write_deadline_ = std::chrono::steady_clock::time_point::max();
}

// Beast closed a timed-out stream and its operation failed, which every caller answers with
// close(): the sweep closes it directly.
template <class Stream>
void Session<Stream>::sweep(std::chrono::steady_clock::time_point now) {
  if ((read_op_ && now >= read_deadline_) || (write_op_ && now >= write_deadline_)) close();
}

template <class Stream>
void Session<Stream>::wind_down() {
  winding_down_ = true;
  if (!exchange_ && !writing_ && after_ == After::nothing) close();
}

template <class Stream>
void Session<Stream>::close() {
  if (closed_) return;
  auto self = self_ptr();
  closed_ = true;
  if (exchange_) {
    exchange_.reset();
    server_.exchange_ended();
  }
  beast::error_code ignored;
  lowest().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  lowest().close();
  server_.leave(enrolled_);
}

template class Session<PlainStream>;
template class Session<TlsStream>;

}  // namespace curlretry::proxy
