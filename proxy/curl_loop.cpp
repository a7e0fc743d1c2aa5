#include "proxy/curl_loop.h"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <chrono>
#include <stdexcept>

namespace asio = boost::asio;

namespace curlretry::proxy {

CurlLoop::CurlLoop(asio::io_context& io) : io_(io), multi_(curl_multi_init()), timer_(io) {
  if (multi_ == nullptr) throw std::runtime_error("cannot create libcurl's multi handle");
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlLoop::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlLoop::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  // libcurl's default keeps 4 idle connections per transfer running at the moment: with 64 clients
  // whose requests come and go, a dip in that count closed upstream connections that the next
  // requests had to open again (connect, close and socket were 6 % of the proxy's CPU on the
  // bench's multi row).
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, kIdleConnections);
}

CurlLoop::~CurlLoop() {
  timer_.cancel();
  // Out of the reactor while the sockets are still open; libcurl closes them in its cleanup.
  closing_ = true;
  for (auto& [fd, watch] : watches_) {
    watch->gone = true;
    watch->descriptor.release();
  }
  watches_.clear();
  to_arm_.clear();
  for (CURL* easy : spares_) curl_easy_cleanup(easy);
  curl_multi_cleanup(multi_);
}

CurlLoop::Watch::~Watch() {
  if (descriptor.is_open()) descriptor.release();
}

CURLMcode CurlLoop::add(CURL* easy) {
  const CURLMcode code = curl_multi_add_handle(multi_, easy);
  arm_queued();
  return code;
}

void CurlLoop::remove(CURL* easy) {
  curl_multi_remove_handle(multi_, easy);
  arm_queued();
}

CURL* CurlLoop::take_easy() {
  CURL* easy = nullptr;
  if (spares_.empty()) {
    easy = curl_easy_init();
  } else {
    easy = spares_.back();
    spares_.pop_back();
  }
  if (easy != nullptr) {
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &CurlLoop::on_open);
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, this);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &CurlLoop::on_close);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
  }
  return easy;
}

curl_socket_t CurlLoop::on_open(void* clientp, curlsocktype, curl_sockaddr* address) {
  auto* self = static_cast<CurlLoop*>(clientp);
  const curl_socket_t s = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (s == CURL_SOCKET_BAD) return s;
  // A watch under this number would be of a socket closed behind our back: never reuse it.
  auto it = self->watches_.find(s);
  if (it != self->watches_.end()) {
    it->second->gone = true;
    it->second->descriptor.release();
    self->watches_.erase(it);
  }
  try {
    self->ours_.insert(s);
  } catch (...) {
    ::close(s);
    return CURL_SOCKET_BAD;
  }
  return s;
}

// Out of the reactor while the number is still this socket's, then closed.
int CurlLoop::on_close(void* clientp, curl_socket_t s) {
  auto* self = static_cast<CurlLoop*>(clientp);
  self->ours_.erase(s);
  auto it = self->watches_.find(s);
  if (it != self->watches_.end()) {
    it->second->gone = true;
    it->second->descriptor.release();
    self->watches_.erase(it);
  }
  return ::close(s);
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
  if (self->closing_) return 0;
  if (what == CURL_POLL_REMOVE) {
    // libcurl tells before it closes a socket it watched (Curl_multi_closed): it leaves the epoll
    // set while its number is still its own.
    auto it = self->watches_.find(s);
    if (it == self->watches_.end()) return 0;
    if (self->ours_.count(s) != 0) {
      it->second->what = 0;  // parked: a wait still under way finds nothing wanted
      return 0;
    }
    it->second->gone = true;
    it->second->descriptor.release();  // its pending waits end with operation_aborted
    self->watches_.erase(it);
    return 0;
  }
  try {
    std::shared_ptr<Watch>& watch = self->watches_[s];
    if (!watch) {
      auto made = std::make_shared<Watch>(self->io_);
      boost::system::error_code ec;
      made->descriptor.assign(s, ec);
      if (ec) {
        self->watches_.erase(s);
        return -1;  // libcurl fails the transfer
      }
      made->fd = s;
      watch = std::move(made);
    }
    watch->what = what;
    self->queue_arm(watch);
  } catch (...) {
    self->watches_.erase(s);
    return -1;
  }
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
    // expiry cost the reactor two timerfd_settime calls and a wake-up per request. Posted, not run
    // at the end of the turn that added the transfer: run per request, it cost the retry path at
    // 64 at once ~20 % more CPU (measured; the requests of one epoll batch no longer start in one
    // socket_action). A timer still pending may fire later for nothing: a spare socket_action on
    // timeout is harmless.
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
  acting_ = true;
  curl_multi_socket_action(multi_, s, events, &running);
  arm_queued();
  collect_done();
  acting_ = false;
  // A deferred call that defers again posts: the list does not grow while it is walked.
  for (std::size_t i = 0; i < deferred_.size(); ++i) deferred_[i]();
  deferred_.clear();
}

void CurlLoop::defer(std::function<void()> fn) {
  if (acting_) deferred_.push_back(std::move(fn));
  else asio::post(io_, std::move(fn));
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

void CurlLoop::queue_arm(const std::shared_ptr<Watch>& watch) {
  if (watch->queued) return;
  to_arm_.push_back(watch);  // may throw: on_socket answers -1
  watch->queued = true;
}

void CurlLoop::arm_queued() {
  // arm() never calls libcurl: nothing joins the list while it is walked.
  for (std::size_t i = 0; i < to_arm_.size(); ++i) {
    to_arm_[i]->queued = false;
    arm(to_arm_[i]);
  }
  to_arm_.clear();
}

// Waits for what libcurl wants and no wait covers yet. Asio's reactor is edge-triggered, yet a
// wait cannot miss a socket that is ready already (data libcurl left unread, an edge seen while
// nobody waited): async_wait starts with EPOLL_CTL_MOD on the socket (epoll_reactor::start_op,
// Boost 1.74), and the kernel reports a socket ready at that moment.
void CurlLoop::arm(const std::shared_ptr<Watch>& watch) {
  if (watch->gone) return;
  const bool in = (watch->what & CURL_POLL_IN) != 0 && !watch->reading;
  const bool out = (watch->what & CURL_POLL_OUT) != 0 && !watch->writing;
  // One wait per direction; `busy` says one is under way, so libcurl's next wish adds no second.
  const auto wait = [this, &watch](asio::posix::stream_descriptor::wait_type type, bool Watch::*busy, int select) {
    watch.get()->*busy = true;
    watch->descriptor.async_wait(type, [this, watch, busy, select](const boost::system::error_code& ec) {
      watch.get()->*busy = false;
      if (watch->gone || ec == asio::error::operation_aborted) return;
      ready(watch, select | (ec ? CURL_CSELECT_ERR : 0));
    });
  };
  if (in) wait(asio::posix::stream_descriptor::wait_read, &Watch::reading, CURL_CSELECT_IN);
  if (out) wait(asio::posix::stream_descriptor::wait_write, &Watch::writing, CURL_CSELECT_OUT);
}

void CurlLoop::ready(const std::shared_ptr<Watch>& watch, int mask) {
  if (watch->gone) return;
  int wanted = mask & CURL_CSELECT_ERR;
  if ((mask & CURL_CSELECT_IN) && (watch->what & CURL_POLL_IN)) wanted |= CURL_CSELECT_IN;
  if ((mask & CURL_CSELECT_OUT) && (watch->what & CURL_POLL_OUT)) wanted |= CURL_CSELECT_OUT;
  if (wanted & (CURL_CSELECT_IN | CURL_CSELECT_OUT)) action(watch->fd, wanted);
  if (!watch->gone && !watch->queued) {
    try {
      queue_arm(watch);
    } catch (...) {
      // Out of memory: arm it straight away.
      arm(watch);
      return;
    }
    arm_queued();
  }
}

}  // namespace curlretry::proxy
