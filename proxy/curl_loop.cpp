#include "proxy/curl_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <chrono>
#include <stdexcept>

namespace asio = boost::asio;

namespace curlretry::proxy {

CurlLoop::CurlLoop(asio::io_context& io)
    : io_(io), multi_(curl_multi_init()), epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)), epoll_watch_(io), timer_(io) {
  if (multi_ == nullptr || epoll_fd_ < 0) throw std::runtime_error("cannot create libcurl's multi handle");
  epoll_watch_.assign(epoll_fd_);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlLoop::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlLoop::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  wait_ready();
}

CurlLoop::~CurlLoop() {
  timer_.cancel();
  boost::system::error_code ignored;
  epoll_watch_.close(ignored);  // closes epoll_fd_
  for (CURL* easy : spares_) curl_easy_cleanup(easy);
  curl_multi_cleanup(multi_);
}

CURLMcode CurlLoop::add(CURL* easy) { return curl_multi_add_handle(multi_, easy); }

void CurlLoop::remove(CURL* easy) { curl_multi_remove_handle(multi_, easy); }

CURL* CurlLoop::take_easy() {
  if (spares_.empty()) return curl_easy_init();
  CURL* easy = spares_.back();
  spares_.pop_back();
  return easy;
}

void CurlLoop::give_back(CURL* easy) {
  if (spares_.size() >= kSpares) {
    curl_easy_cleanup(easy);
    return;
  }
  curl_easy_reset(easy);
  try {
    spares_.push_back(easy);
  } catch (...) {
    curl_easy_cleanup(easy);
  }
}

void CurlLoop::kick() {
  asio::post(io_, [this] { action(CURL_SOCKET_TIMEOUT, 0); });
}

int CurlLoop::on_socket(CURL*, curl_socket_t s, int what, void* userp, void*) {
  auto* self = static_cast<CurlLoop*>(userp);
  if (what == CURL_POLL_REMOVE) {
    ::epoll_ctl(self->epoll_fd_, EPOLL_CTL_DEL, s, nullptr);  // may be closed already: fine
    self->watched_.erase(s);
    return 0;
  }
  epoll_event ev{};
  ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  ev.data.fd = s;
  // libcurl may close a socket without telling us first; its number can then come back new.
  const bool known = self->watched_.count(s) != 0;
  if (::epoll_ctl(self->epoll_fd_, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0) {
    ::epoll_ctl(self->epoll_fd_, known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev);
  }
  self->watched_.insert(s);
  return 0;
}

int CurlLoop::on_timer(CURLM*, long timeout_ms, void* userp) {
  auto* self = static_cast<CurlLoop*>(userp);
  if (timeout_ms < 0) {
    self->timer_.cancel();
    return 0;
  }
  // Never call libcurl from here: an expired timer completes from the loop, not inline.
  if (timeout_ms == 0) {
    // libcurl asks for "now" on every new transfer: a posted call, not a timer, whose arming and
    // expiry cost the reactor two timerfd_settime calls and a wake-up per request. A timer still
    // pending may fire later for nothing: a spare socket_action on timeout is harmless.
    self->timer_.cancel();
    asio::post(self->io_, [self] { self->action(CURL_SOCKET_TIMEOUT, 0); });
    return 0;
  }
  self->timer_.expires_after(std::chrono::milliseconds(timeout_ms));
  self->timer_.async_wait([self](const boost::system::error_code& ec) {
    if (!ec) self->action(CURL_SOCKET_TIMEOUT, 0);
  });
  return 0;
}

void CurlLoop::action(curl_socket_t s, int events) {
  int running = 0;
  curl_multi_socket_action(multi_, s, events, &running);
  collect_done();
}

void CurlLoop::collect_done() {
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;  // msg dies on the next call into the multi handle
    const CURLcode code = msg->data.result;
    if (on_done) on_done(easy, code);
  }
}

void CurlLoop::wait_ready() {
  if (waiting_) return;
  waiting_ = true;
  epoll_watch_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
    waiting_ = false;
    if (!ec) poll_ready();
  });
}

// Level-triggered: while any socket libcurl watches is ready, come back through the loop (other
// work interleaves); only an empty set goes back to waiting on the epoll descriptor.
void CurlLoop::poll_ready() {
  epoll_event events[64];
  const int n = ::epoll_wait(epoll_fd_, events, 64, 0);
  for (int i = 0; i < n; ++i) {
    int mask = 0;
    if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) mask |= CURL_CSELECT_IN;
    if (events[i].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
    if (events[i].events & EPOLLERR) mask |= CURL_CSELECT_ERR;
    action(events[i].data.fd, mask);
  }
  if (n > 0) asio::post(io_, [this] { poll_ready(); });
  else wait_ready();
}

}  // namespace curlretry::proxy
