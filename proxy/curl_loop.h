// libcurl's multi interface on an Asio io_context: one thread, one loop, for the client side and
// the upstream side. libcurl's sockets sit in a level-triggered epoll set of their own whose one
// descriptor Asio watches, so that no readiness is lost to Asio's edge-triggered reactor when
// libcurl leaves data unread; its timer is an Asio steady_timer.
#pragma once

#include <curl/curl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <functional>
#include <unordered_set>
#include <vector>

namespace curlretry::proxy {

class CurlLoop {
 public:
  explicit CurlLoop(boost::asio::io_context& io);
  ~CurlLoop();
  CurlLoop(const CurlLoop&) = delete;
  CurlLoop& operator=(const CurlLoop&) = delete;

  // Never from inside a libcurl callback.
  CURLMcode add(CURL* easy);
  void remove(CURL* easy);
  // Called once per added transfer with its result; the handler removes it (remove()).
  std::function<void(CURL*, CURLcode)> on_done;
  // Asks libcurl to look at its transfers soon (after curl_easy_pause from outside a callback).
  void kick();
  // An easy handle with no options set: a spare one, or new (nullptr: libcurl could not make one).
  CURL* take_easy();
  // A handle out of the multi handle, never from inside a libcurl callback: reset and kept for
  // the next transfer (up to kSpares), else cleaned up.
  void give_back(CURL* easy);

 private:
  static int on_socket(CURL* easy, curl_socket_t s, int what, void* userp, void* socketp);
  static int on_timer(CURLM* multi, long timeout_ms, void* userp);
  void action(curl_socket_t s, int events);
  void collect_done();
  void wait_ready();
  void poll_ready();

  boost::asio::io_context& io_;
  CURLM* multi_;
  int epoll_fd_;
  boost::asio::posix::stream_descriptor epoll_watch_;
  boost::asio::steady_timer timer_;
  std::unordered_set<curl_socket_t> watched_;
  bool waiting_ = false;
  // A reused handle spares curl_easy_init's allocations and the shim's per-handle setup.
  static constexpr std::size_t kSpares = 16;
  std::vector<CURL*> spares_;
};

}  // namespace curlretry::proxy
