// libcurl's multi interface on an Asio io_context: one thread, one loop, for the client side and
// the upstream side. Each socket libcurl watches is registered with Asio's reactor itself, so one
// epoll_wait serves both sides (each wait re-arms the socket with EPOLL_CTL_MOD, so readiness
// libcurl leaves behind is seen again: CurlLoop::arm). libcurl's timer is an Asio steady_timer.
#pragma once

#include <curl/curl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <unordered_map>
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
  // Runs `fn` once libcurl's current call and its finished transfers are dealt with, in the same
  // turn of the loop; outside such a call, from the loop soon. Never inline.
  void defer(std::function<void()> fn);
  // An easy handle with no options set: a spare one, or new (nullptr: libcurl could not make one).
  CURL* take_easy();
  // A handle out of the multi handle, never from inside a libcurl callback: reset and kept for
  // the next transfer (up to kSpares), else cleaned up.
  void give_back(CURL* easy);

 private:
  static int on_socket(CURL* easy, curl_socket_t s, int what, void* userp, void* socketp);
  static curl_socket_t on_open(void* clientp, curlsocktype purpose, curl_sockaddr* address);
  static int on_close(void* clientp, curl_socket_t s);
  static int on_timer(CURLM* multi, long timeout_ms, void* userp);
  // One socket libcurl watches, as Asio sees it (released, never closed: the socket is libcurl's).
  struct Watch {
    explicit Watch(boost::asio::io_context& io) : descriptor(io) {}
    ~Watch();
    boost::asio::posix::stream_descriptor descriptor;
    curl_socket_t fd = CURL_SOCKET_BAD;
    int what = 0;             // the CURL_POLL_* libcurl wants
    bool reading = false;     // an Asio wait for it is under way
    bool writing = false;
    bool queued = false;      // in to_arm_
    bool gone = false;        // libcurl removed it
  };
  void action(curl_socket_t s, int events);
  void collect_done();
  void ready(const std::shared_ptr<Watch>& watch, int mask);
  void queue_arm(const std::shared_ptr<Watch>& watch);
  void arm_queued();
  void arm(const std::shared_ptr<Watch>& watch);

  boost::asio::io_context& io_;
  CURLM* multi_;
  boost::asio::steady_timer timer_;
  std::unordered_map<curl_socket_t, std::shared_ptr<Watch>> watches_;
  // Sockets whose waits are set up once libcurl's call is over (it may change its mind within it).
  std::vector<std::shared_ptr<Watch>> to_arm_;
  // Connection sockets opened through on_open: their close is seen (on_close), so between
  // transfers they stay registered with the reactor, sparing an epoll_ctl pair and Asio's
  // FIONBIO per request. Others (a resolver's wake-up pair) leave at CURL_POLL_REMOVE.
  std::unordered_set<curl_socket_t> ours_;
  bool closing_ = false;
  bool acting_ = false;  // inside action(): defer() collects in deferred_
  std::vector<std::function<void()>> deferred_;
  // A reused handle spares curl_easy_init's allocations and the shim's per-handle setup.
  static constexpr std::size_t kSpares = 16;
  // Upstream connections kept open while idle (libcurl closes the oldest beyond this).
  static constexpr long kIdleConnections = 256;
  std::vector<CURL*> spares_;
};

}  // namespace curlretry::proxy
