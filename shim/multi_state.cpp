#include "shim/multi_state.h"

#include <algorithm>
#include <functional>

#include <sys/select.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/registry.h"

namespace curlretry::shim {

void MultiState::park(CURL* easy, core::Millis delay, CURLcode code) {
  std::uint64_t generation = next_generation_++;
  parked_[easy] = Entry{generation, code};
  heap_.push_back(Parked{Clock::now() + delay, easy, generation});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
}

void MultiState::discard_stale_heap_top() {
  while (!heap_.empty()) {
    const Parked& top = heap_.front();
    auto it = parked_.find(top.easy);
    if (it != parked_.end() && it->second.generation == top.generation) return;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    heap_.pop_back();
  }
}

std::optional<long> MultiState::ms_until_due() const {
  // The heap top may be stale (forgotten); that only makes us wake early, never late.
  if (heap_.empty() || parked_.empty()) return std::nullopt;
  // Rounded up: a host woken a fraction of a millisecond early would find nothing due and spin.
  auto left = std::chrono::ceil<std::chrono::milliseconds>(heap_.front().due - Clock::now()).count();
  return left > 0 ? static_cast<long>(left) : 0L;
}

long MultiState::clamp_timeout(long timeout_ms) const {
  // A paused replay is resumed by our wrappers: keep the host's loop coming back.
  constexpr long kReplayPoll = 100;
  if (!replaying_.empty() && (timeout_ms < 0 || timeout_ms > kReplayPoll)) timeout_ms = kReplayPoll;
  auto due = ms_until_due();
  if (!due) return timeout_ms;
  if (timeout_ms < 0) return *due;
  return std::min(timeout_ms, *due);
}

void MultiState::readd_due() {
  auto add = api_->multi_add_handle;
  auto now = Clock::now();
  for (;;) {
    discard_stale_heap_top();
    if (heap_.empty() || heap_.front().due > now) break;
    Parked next = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    heap_.pop_back();
    CURLcode last_code = parked_[next.easy].last_code;
    parked_.erase(next.easy);
    Transfer* transfer = registry::find(next.easy);
    if (transfer == nullptr) continue;
    transfer->prepare_next_attempt();
    CURLMcode added = CURLM_BAD_FUNCTION_ARGUMENT;
    if (add) {
      LibcurlScope scope;
      added = add(multi_, next.easy);
    }
    if (added != CURLM_OK) {
      // libcurl would not take it back: the host gets the last attempt's result.
      transfer->end();
      CURLMsg msg{};
      msg.msg = CURLMSG_DONE;
      msg.easy_handle = next.easy;
      msg.data.result = last_code;
      queue_.push_back(msg);
    }
  }
}

void MultiState::drain() {
  auto info_read = api_->multi_info_read;
  auto remove = api_->multi_remove_handle;
  if (info_read == nullptr) return;
  resume_replays();
  for (;;) {
    CURLMsg* msg;
    int left = 0;
    {
      LibcurlScope scope;
      msg = info_read(multi_, &left);
    }
    if (msg == nullptr) break;
    CURLMsg copy = *msg;  // the pointer dies at the next libcurl call
    Transfer* transfer = copy.msg == CURLMSG_DONE ? registry::find(copy.easy_handle) : nullptr;
    if (transfer == nullptr || !transfer->running()) {
      queue_.push_back(copy);
      continue;
    }
    Transfer::Step step = transfer->finish_attempt(copy.data.result);
    if (step.retry && remove != nullptr) {
      {
        LibcurlScope scope;
        remove(multi_, copy.easy_handle);
      }
      park(copy.easy_handle, step.delay, copy.data.result);
      continue;
    }
    finish(copy.easy_handle, *transfer, copy, step);
  }
}

void MultiState::finish(CURL* easy, Transfer& transfer, CURLMsg msg, const Transfer::Step& step) {
  if (step.paused) {
    replaying_.emplace_back(easy, msg);
    return;
  }
  transfer.end();
  msg.data.result = step.retry ? msg.data.result : step.code;
  queue_.push_back(msg);
}

void MultiState::resume_replays() {
  if (replaying_.empty()) return;
  auto waiting = std::move(replaying_);
  replaying_.clear();
  for (auto& [easy, msg] : waiting) {
    Transfer* transfer = registry::find(easy);
    if (transfer == nullptr) continue;
    if (!transfer->unpause_requested()) {
      replaying_.emplace_back(easy, msg);
      continue;
    }
    finish(easy, *transfer, msg, transfer->resume_replay());
  }
}

CURLMsg* MultiState::next_message(int* msgs_in_queue) {
  if (queue_.empty()) {
    if (msgs_in_queue) *msgs_in_queue = 0;
    return nullptr;
  }
  delivered_ = queue_.front();
  queue_.pop_front();
  if (msgs_in_queue) *msgs_in_queue = static_cast<int>(queue_.size());
  return &delivered_;
}

void MultiState::drop_queued(CURL* easy) {
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [easy](const CURLMsg& m) { return m.easy_handle == easy; }),
               queue_.end());
}

bool MultiState::forget(CURL* easy) {
  drop_queued(easy);
  auto replaying = std::find_if(replaying_.begin(), replaying_.end(), [easy](const auto& r) { return r.first == easy; });
  if (replaying != replaying_.end()) {
    replaying_.erase(replaying);
    if (Transfer* transfer = registry::find(easy)) transfer->end();
    return true;
  }
  if (Transfer* transfer = registry::find(easy)) transfer->end();
  return parked_.erase(easy) > 0;
}

void MultiState::forget_all() {
  for (auto& [easy, entry] : parked_) {
    if (Transfer* transfer = registry::find(easy)) transfer->end();
  }
  for (auto& [easy, msg] : replaying_) {
    if (Transfer* transfer = registry::find(easy)) transfer->end();
  }
  parked_.clear();
  heap_.clear();
  replaying_.clear();
  queue_.clear();
}

std::optional<Clock::time_point> MultiState::next_due() {
  discard_stale_heap_top();
  if (heap_.empty()) return std::nullopt;
  return heap_.front().due;
}

int MultiState::on_timer(CURLM*, long timeout_ms, void* userdata) {
  auto* state = static_cast<MultiState*>(userdata);
  auto now = Clock::now();
  state->libcurl_deadline_.reset();
  if (timeout_ms >= 0) state->libcurl_deadline_ = now + std::chrono::milliseconds(timeout_ms);
  state->told_due_ = state->next_due();
  long effective = state->clamp_timeout(timeout_ms);
  if (state->host_timer == nullptr) return 0;
  HostScope scope;
  return state->host_timer(state->multi_, effective, state->host_timer_data);
}

void MultiState::add_wakeup_fd(fd_set* read_fds, int* max_fd) {
  auto due = next_due();
  if (!due || read_fds == nullptr || max_fd == nullptr) return;
  if (wakeup_fd_ < 0) wakeup_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (wakeup_fd_ < 0 || wakeup_fd_ >= FD_SETSIZE) return;
  // Re-armed on every call: setting the time also clears an expiry nobody read.
  auto left = std::chrono::ceil<std::chrono::nanoseconds>(*due - Clock::now()).count();
  if (left < 1) left = 1;
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(left / 1000000000);
  spec.it_value.tv_nsec = static_cast<long>(left % 1000000000);
  if (timerfd_settime(wakeup_fd_, 0, &spec, nullptr) != 0) return;
  FD_SET(wakeup_fd_, read_fds);
  if (*max_fd < wakeup_fd_) *max_fd = wakeup_fd_;
}

void MultiState::close_wakeup_fd() {
  if (wakeup_fd_ >= 0) ::close(wakeup_fd_);
  wakeup_fd_ = -1;
}

void MultiState::host_timer_fired() {
  // The host's one-shot timer has run: it must be armed again for what is still parked, and a
  // libcurl deadline now in the past is spent (libcurl does not always say so).
  told_due_.reset();
  if (libcurl_deadline_ && *libcurl_deadline_ <= Clock::now()) libcurl_deadline_.reset();
}

void MultiState::update_host_timer() {
  if (host_timer == nullptr) return;
  auto due = next_due();
  if (due == told_due_) return;
  told_due_ = due;
  if (!due) return;  // nothing parked: libcurl's own timer stands as libcurl set it
  auto now = Clock::now();
  auto at = libcurl_deadline_ ? std::min(*libcurl_deadline_, *due) : *due;
  long effective = at > now ? static_cast<long>(std::chrono::ceil<std::chrono::milliseconds>(at - now).count()) : 0L;
  HostScope scope;
  host_timer(multi_, effective, host_timer_data);
}

}  // namespace curlretry::shim
