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
  if (over_limit) {
    respond(503, "application/json",
            "{\"error\":\"the proxy holds proxy.max_connections connections\",\"limit\":" +
                std::to_string(server_.options().max_connections) + "}\n",
            true, "Retry-After: 1\r\n");
    return;
  }
  if (foreign) {
    respond(403, "application/json",
            "{\"error\":\"this curlretry proxy serves only the user who runs it (uid " + std::to_string(::geteuid()) +
                "); set proxy.token to share it\"}\n",
            true);
    return;
  }
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
                              if (self->closed()) return;
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
  if (closed()) return;
  if (winding_down_) {
    close();
    return;
  }
  const ServerOptions& o = server_.options();
  enter(SessionPhase::reading);
  if (buffer_.size() == 0) {
    // Idle between requests (or before the first): the head's own deadline starts at its first byte.
    expires_after(o.idle_timeout);
    read_op_ = true;
    stream_.async_read_some(buffer_.prepare(4096), [self = self_ptr()](beast::error_code ec, std::size_t n) {
      self->read_op_ = false;
      if (self->closed()) return;
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
  if (closed()) return;
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
  const auto expect = request[http::field::expect];
  if (iequals(std::string_view(expect.data(), expect.size()), "100-continue") && !parser_->is_done()) {
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
  expires_after(server_.options().body_timeout);
  read_op_ = true;
  http::async_read(stream_, buffer_, *parser_, [self = self_ptr()](beast::error_code ec2, std::size_t) {
    self->read_op_ = false;
    self->on_request(ec2);
  });
}

template <class Stream>
template <class Then>
void Session<Stream>::read_body_chunk(Then then) {
  auto& body = body_parser_->get().body();
  body.data = chunk();
  body.size = kChunkSize;
  body.more = true;
  expires_after(server_.options().body_timeout);
  read_op_ = true;
  body_reading_ = true;
  http::async_read_some(stream_, buffer_, *body_parser_,
                        [self = self_ptr(), then = std::move(then)](beast::error_code ec, std::size_t) {
                          self->read_op_ = false;
                          self->body_reading_ = false;
                          if (self->closed()) return;
                          if (ec == http::error::need_buffer) ec = {};
                          then(*self, ec, kChunkSize - self->body_parser_->get().body().size);
                        });
}

template <class Stream>
void Session<Stream>::collect_chunked() {
  read_body_chunk([](Session& self, beast::error_code ec, std::size_t got) {
    if (ec) {
      self.on_request(ec);
      return;
    }
    self.collected_.append(self.chunk_.get(), got);
    const bool done = self.body_parser_->is_done();
    const bool over = self.collected_.size() > self.server_.options().settings.max_body;
    if (!done && !over) {
      self.collect_chunked();
      return;
    }
    Request request(std::move(*self.head_));
    self.head_.reset();
    if (over) {
      // The part read so far goes first (forward() feeds it), the rest as the upstream takes it.
      self.streaming_ = true;
      if (!done) self.expires_never();
    } else {
      self.expires_never();
      request.body() = std::move(self.collected_);
      self.collected_.clear();
    }
    self.dispatch(request);
  });
}

template <class Stream>
void Session<Stream>::on_request(beast::error_code ec) {
  if (closed()) return;
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
  up.proxy = server_.options().settings.upstream_proxy;
  up.client_http11 = request.version() >= 11;
  up.client_keep_alive = keep_alive;
  // Through the user's own proxy, libcurl connects to that proxy (which may well be on loopback)
  // and the target's name is resolved there.
  up.refuse_loopback = !route && !server_.options().settings.forward.allow_loopback && !server_.parent();
  up.opaque_errors = !route;

  exchange_ = std::make_unique<Exchange>(server_.loop(), *this, std::move(up), static_cast<SessionBase*>(this));
  if (!exchange_->start()) {
    exchange_.reset();
    respond(502, "application/json", "{\"error\":\"libcurl refused the transfer\"}\n", !keep_alive);
    return;
  }
  server_.exchange_started();
  enter(SessionPhase::exchanging);
  if (streaming_) {
    if (!body_parser_) body_parser_.emplace(std::move(*parser_));
    if (!collected_.empty()) {
      exchange_->feed(collected_.data(), collected_.size(), body_parser_->is_done());
      collected_.clear();
      collected_.shrink_to_fit();
    }
    pump_body();
  } else if (exchange_) {
    // The request now lives in the exchange (its headers, its kept body). What the session still
    // holds of it, the parsed fields and the read buffer's empty room, would stay for the whole
    // exchange: for an agent's event stream, minutes. read_head() makes both again.
    parser_.reset();
    if (buffer_.size() == 0) buffer_.shrink_to_fit();
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
  enter(SessionPhase::upgraded);
  std::weak_ptr<Session> weak = self_ptr();
  upgrade_ = make_upgrade<Stream>(server_, stream_, self_ptr(), std::move(*target), [weak](std::string answer) {
    const auto self = weak.lock();
    if (!self || self->closed()) return;
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
  if (closed() || body_reading_ || !body_parser_ || body_parser_->is_done() || !exchange_) return;
  if (exchange_->upload_backlog() >= Exchange::kHighWater) return;  // want_body() comes back for more
  read_body_chunk([](Session& self, beast::error_code ec, std::size_t got) {
    if (ec) {
      self.close();  // a client that stops sending its body takes the transfer along
      return;
    }
    const bool done = self.body_parser_->is_done();
    if (done) self.expires_never();
    if (self.exchange_) self.exchange_->feed(self.chunk_.get(), got, done);
    if (done)
      self.watch_client();
    else
      self.pump_body();
  });
}

// A client that hangs up mid-exchange: its transfer goes. A readable socket that is not at its
// end carries a pipelined request; that one waits its turn in the kernel, unwatched.
template <class Stream>
void Session<Stream>::watch_client() {
  if (watching_ || closed() || !exchange_) return;
  watching_ = true;
  lowest().socket().async_wait(asio::ip::tcp::socket::wait_read, [self = self_ptr()](beast::error_code ec) {
    self->watching_ = false;
    if (self->closed() || !self->exchange_) return;
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
  if (!exchange_ && !upgrade_ && !writing_ && !flushing()) close();
}

template <class Stream>
void Session<Stream>::close() {
  if (closed()) return;
  auto self = self_ptr();
  enter(SessionPhase::closed);
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
