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
#include "proxy/request_rules.h"
#include "proxy/server.h"
#include "proxy/tunnel.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace curlretry::proxy {

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
  if constexpr (kTls)
    handshake();
  else
    read_head();
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
  // The head may fill header_limit (its parser answers 431 then); past the head the buffer holds
  // at most a chunk-size line or a trailer section (on_head).
  buffer_.max_size(o.header_limit + kLineLimit);
  parser_.emplace();
  body_parser_.reset();
  head_.reset();
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
  respond(
      413, "application/json",
      "{\"error\":\"request body too large\",\"limit\":" + std::to_string(server_.options().settings.max_body) + "}\n",
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
  if (auto refusal = framing_refusal(request.base())) {
    respond(refusal->status, "application/json", "{\"error\":" + json_string(refusal->error) + "}\n", true);
    return;
  }
  // A chunk-size line with its extensions, or the trailer section, must fit this: Beast keeps a
  // line whole in the buffer until its CRLF, so an unbounded buffer is unbounded memory. (A
  // Content-Length body passes through the buffer as it comes: its reads stay at 64 KiB.)
  if (parser_->chunked()) buffer_.max_size(std::max(buffer_.size(), kLineLimit));
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
    head_.emplace(request.base());  // the trailer fields Beast adds to the parser's head never go upstream
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
    Request request(std::move(*self->head_));
    self->head_.reset();
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
    } else if (ec == http::error::buffer_overflow) {
      respond(
          400, "application/json",
          "{\"error\":\"a chunk-size line or the trailer section is over " + std::to_string(kLineLimit) + " bytes\"}\n",
          true);
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
void Session<Stream>::forward(Request& request, std::string url, bool keep_alive, bool route) {
  if (server_.stopping()) {
    respond(503, "application/json", "{\"error\":\"the proxy is shutting down\"}\n", true);
    return;
  }
  if (websocket_upgrade(request.base()) && !streaming_) {
    upgrade(request, url, route);
    return;
  }
  UpstreamRequest up;
  up.method = std::string(request.method_string());
  up.url = std::move(url);
  up.headers = end_to_end_headers(request.base());
  up.has_body = request.has_content_length() || request.chunked();
  up.streamed = streaming_;
  if (streaming_)
    up.streamed_length = streamed_length_;
  else
    up.body = std::move(request.body());
  up.ca_file = server_.options().settings.upstream_ca_file;
  up.client_http11 = request.version() >= 11;
  up.client_keep_alive = keep_alive;
  up.refuse_loopback = !route && !server_.options().settings.forward.allow_loopback;
  up.opaque_errors = !route;

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
void Session<Stream>::upgrade(Request& request, const std::string& url, bool route) {
  UpgradeHead head;
  head.method = std::string(request.method_string());
  head.upgrade = std::string(request[http::field::upgrade]);
  head.headers = end_to_end_headers(request.base());
  std::optional<UpgradeTarget> target = upgrade_target(url, head);
  if (!target) {
    respond(400, "application/json", "{\"error\":\"a WebSocket needs an http:// or https:// upstream\"}\n", true);
    return;
  }
  // A client may send its first frames before the 101: they follow the head upstream.
  target->early = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  target->refuse_loopback = !route && !server_.options().settings.forward.allow_loopback;
  target->opaque_errors = !route;
  expires_never();
  server_.exchange_started();
  std::weak_ptr<Session> weak = self_ptr();
  upgrade_ = make_upgrade<Stream>(server_, stream_, self_ptr(), std::move(*target), [weak](std::string answer) {
    const auto self = weak.lock();
    if (!self || self->closed_) return;
    self->end_upgrade();
    if (answer.empty()) {
      self->close();
    } else {
      self->send(std::move(answer));
      self->after_response(false);
    }
  });
  const auto running = upgrade_;  // `done` may run inside start() and drop upgrade_
  running->start();
}

template <class Stream>
void Session<Stream>::end_upgrade() {
  if (!upgrade_) return;
  upgrade_.reset();
  server_.exchange_ended();
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
    if (done)
      self->watch_client();
    else
      self->pump_body();
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
  if (after == After::next)
    read_head();
  else if (after == After::close)
    linger();
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
  buffer_.consume(buffer_.size());
  buffer_.max_size(64 * 1024);
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
    if (ec || self->drained_ > 16 * 1024 * 1024)
      self->close();
    else
      self->drain();
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
    const ssize_t n =
        ::send(lowest().socket().native_handle(), inflight_.data(), inflight_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
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
  if (upgrade_) {
    const auto running = upgrade_;
    running->sweep(now);
    return;
  }
  if ((read_op_ && now >= read_deadline_) || (write_op_ && now >= write_deadline_)) close();
}

template <class Stream>
void Session<Stream>::wind_down() {
  winding_down_ = true;
  if (!exchange_ && !upgrade_ && !writing_ && after_ == After::nothing) close();
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
  if (upgrade_) {
    const auto running = std::move(upgrade_);
    running->close();
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
