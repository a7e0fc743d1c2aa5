#include "upstream/stream.h"

#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace curlretry::upstream {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;

using Clock = std::chrono::steady_clock;

long ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<long>(left.count()) : 0;
}

}  // namespace

Stream::Stream(int fd, SSL_CTX* tls, int stop_fd) : fd_(fd), stop_fd_(stop_fd) {
  if (tls) {
    ssl_ = SSL_new(tls);
    if (ssl_) SSL_set_fd(ssl_, fd_);
  }
}

Stream::~Stream() {
  if (ssl_) SSL_free(ssl_);
}

bool Stream::handshake() {
  if (!ssl_) return true;
  return SSL_accept(ssl_) == 1;
}

bool Stream::fill() {
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  char chunk[kReadChunk];
  for (;;) {
    int got = 0;
    if (ssl_) {
      got = SSL_read(ssl_, chunk, sizeof chunk);
      if (got <= 0) return false;
    } else {
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      got = static_cast<int>(n);
    }
    buffer_.append(chunk, static_cast<std::size_t>(got));
    return true;
  }
}

std::size_t Stream::read_some(char* out, std::size_t n) {
  if (offset_ == buffer_.size() && !fill()) return 0;
  std::size_t take = std::min(n, buffer_.size() - offset_);
  std::memcpy(out, buffer_.data() + offset_, take);
  offset_ += take;
  return take;
}

bool Stream::read_line(std::string& line, std::size_t max) {
  for (;;) {
    auto newline = buffer_.find('\n', offset_);
    std::size_t end = newline == std::string::npos ? buffer_.size() : newline + 1;
    if (line.size() + (end - offset_) > max) return false;
    line.append(buffer_, offset_, end - offset_);
    offset_ = end;
    if (newline != std::string::npos) return true;
    if (!fill()) return false;
  }
}

bool Stream::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    if (ssl_) {
      // Without SSL_MODE_ENABLE_PARTIAL_WRITE, a blocking SSL_write writes all or fails.
      int n = SSL_write(ssl_, bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), 1 << 20)));
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    } else {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  return true;
}

bool Stream::pause(long ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    long left = ms_left(deadline);
    if (left == 0) return true;
    // POLLRDHUP: the client gave up (curl -m) — stop holding a thread for it.
    pollfd fds[2] = {{fd_, POLLRDHUP, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(std::min(left, 1000L)));
    if (n < 0 && errno != EINTR) return false;
    if (n > 0 && (fds[0].revents != 0 || fds[1].revents != 0)) return false;
  }
}

void Stream::finish_clean() {
  if (finished_) return;
  finished_ = true;
  if (ssl_) SSL_shutdown(ssl_);  // sends close_notify; we do not wait for the peer's
  ::shutdown(fd_, SHUT_WR);
}

void Stream::finish_reset() {
  if (finished_) return;
  finished_ = true;
  linger hard{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
}

void Stream::finish_lingering() {
  if (finished_) return;
  finish_clean();
  // Bounded: 2 s and 256 MiB, enough for a client to notice the response and stop sending.
  constexpr std::size_t kMaxDrain = 256u << 20;
  auto deadline = Clock::now() + std::chrono::seconds(2);
  std::size_t drained = 0;
  char sink[kReadChunk];
  while (drained < kMaxDrain) {
    long left = ms_left(deadline);
    if (left == 0) return;
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || fds[1].revents != 0) return;
    ssize_t got = ::recv(fd_, sink, sizeof sink, 0);
    if (got <= 0) return;
    drained += static_cast<std::size_t>(got);
  }
}

}  // namespace curlretry::upstream
