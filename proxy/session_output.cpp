// The way out of a Session: the proxy's own answers, the response bytes written in order with
// backpressure, what follows a complete answer (the next request, or a linger and the close),
// and the read and write deadlines the Server's sweep checks.
#include <sys/socket.h>

#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/status.hpp>
#include <cerrno>

#include "proxy/server.h"
#include "proxy/session.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace curlretry::proxy {

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
  enter(keep_alive && !winding_down_ ? SessionPhase::flushing_next : SessionPhase::flushing_close);
  if (!writing_ && pending_.empty()) next_or_close();
}

template <class Stream>
void Session<Stream>::next_or_close() {
  if (phase_ == SessionPhase::flushing_next)
    read_head();
  else if (phase_ == SessionPhase::flushing_close)
    linger();
}

// A close with request bytes still unread (an early 413, a 400) would make the kernel answer them
// with a reset that can destroy the response before the client reads it: stop sending, drain
// what still comes for a short while, then close.
template <class Stream>
void Session<Stream>::linger() {
  if (closed()) return;
  if (body_reading_) {
    close();  // a streamed body's read is under way: no second reader on the connection
    return;
  }
  enter(SessionPhase::lingering);
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
    if (self->closed()) return;
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
  if (closed()) return;
  pending_ += bytes;
  if (writing_) return;
  // The write starts once libcurl's call is over: a response's head, body and end that libcurl
  // hands over in one go leave in one write (one syscall) instead of one each, in the same turn
  // of the loop (a posted write cost the reactor one more epoll_wait). writing_ holds the
  // session (next request, wind-down) as a running write would.
  writing_ = true;
  server_.loop().defer([self = self_ptr()] {
    if (self->closed()) {
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
  if (closed()) return;
  if (ec) {
    close();
    return;
  }
  if (exchange_ && backlog() < Exchange::kLowWater) exchange_->drained();
  if (!writing_ && !pending_.empty()) start_write();
  if (!writing_ && !closed()) {
    if (phase_ != SessionPhase::reading) expires_never();
    if (flushing()) next_or_close();
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

// The other members are instantiated in session.cpp with the class.
template void Session<PlainStream>::respond(int, const std::string&, const std::string&, bool, const std::string&);
template void Session<PlainStream>::after_response(bool);
template void Session<PlainStream>::next_or_close();
template void Session<PlainStream>::linger();
template void Session<PlainStream>::drain();
template void Session<PlainStream>::send(std::string);
template void Session<PlainStream>::start_write();
template void Session<PlainStream>::written(beast::error_code);
template void Session<PlainStream>::expires_after(std::chrono::milliseconds);
template void Session<PlainStream>::expires_never();
template void Session<TlsStream>::respond(int, const std::string&, const std::string&, bool, const std::string&);
template void Session<TlsStream>::after_response(bool);
template void Session<TlsStream>::next_or_close();
template void Session<TlsStream>::linger();
template void Session<TlsStream>::drain();
template void Session<TlsStream>::send(std::string);
template void Session<TlsStream>::start_write();
template void Session<TlsStream>::written(beast::error_code);
template void Session<TlsStream>::expires_after(std::chrono::milliseconds);
template void Session<TlsStream>::expires_never();
}  // namespace curlretry::proxy
