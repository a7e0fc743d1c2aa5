// One accepted connection as a byte stream, plain TCP or TLS, with the three ways the upstream
// can end it. Blocking I/O: the server unblocks a stream at shutdown with shutdown(2) on its fd,
// which is why the stream never close(2)s the fd itself: the server unregisters it first, then
// closes it, so a shutdown can never hit a recycled descriptor.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace curlretry::upstream {

class Stream {
 public:
  // `tls` null = plain TCP. `stop_fd` becomes readable when the server is stopping.
  Stream(int fd, SSL_CTX* tls, int stop_fd);
  ~Stream();  // frees the TLS state; the fd stays open
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  bool handshake();  // TLS server handshake; true at once for plain TCP

  // Up to `n` bytes, buffered data first. 0 = peer closed, error, or shutdown.
  std::size_t read_some(char* out, std::size_t n);
  // Appends bytes to `line` up to and including "\r\n"; false on EOF or if longer than `max`.
  bool read_line(std::string& line, std::size_t max);
  bool write_all(std::string_view bytes);

  // Sleeps `ms`; false when the peer hung up or the server is stopping (stop serving then).
  bool pause(long ms);

  // Endings; the server's close(2) completes them.
  void finish_clean();      // TLS close_notify, FIN
  void finish_reset();      // SO_LINGER {1, 0}: the close sends a RST, no close_notify
  void finish_lingering();  // FIN, then drain what the client still sends (bounded): a response
                            // sent before the body was read must not be lost to a RST

 private:
  bool fill();  // reads more into the buffer; false on EOF/error

  int fd_;
  SSL* ssl_ = nullptr;
  int stop_fd_;
  std::string buffer_;
  std::size_t offset_ = 0;  // consumed part of buffer_
  bool finished_ = false;
};

}  // namespace curlretry::upstream
