#include "shim/multi_state.h"

#include <sys/select.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "shim/real_curl.h"
#include "shim/reentry_guard.h"

namespace curlretry::shim {

void MultiState::adopt(CURL* easy, Transfer* transfer) {
  members_.try_emplace(easy).first->second.transfer = transfer;
  transfer->set_multi(multi_);
}

void MultiState::release(CURL* easy) {
  // Its transfer is not touched: it is being destroyed, or already runs in another multi.
  auto it = members_.find(easy);
  Member* m = it == members_.end() ? nullptr : &it->second;
  drop_queued(easy, m);
  if (!parked_.empty()) parked_.erase(easy);
  if (!replaying_.empty()) std::erase_if(replaying_, [easy](const auto& r) { return r.first == easy; });
  if (m == nullptr) return;
  if (m->transfer->multi() == multi_) m->transfer->set_multi(nullptr);
  members_.erase(it);
}

MultiState::Member* MultiState::member(CURL* easy) {
  auto it = members_.find(easy);
  return it == members_.end() ? nullptr : &it->second;
}

void MultiState::enqueue(const CURLMsg& msg, Member* member) {
  queue_.push_back(Queued{msg, member});
  if (member != nullptr)
    ++member->queued;
  else
    ++unowned_queued_;
}

void MultiState::park(CURL* easy, const between_attempts::PendingRetry& retry) {
  std::uint64_t generation = next_generation_++;
  parked_[easy] = Entry{generation, retry};
  Member* m = member(easy);
  schedule(easy, generation, m != nullptr ? between_attempts::next_look(*m->transfer, retry, Clock::now()) : retry.due);
}

void MultiState::schedule(CURL* easy, std::uint64_t generation, Clock::time_point look) {
  // `look` from between_attempts: a retry another request's success may wake is looked at every
  // kLook (the host's timeout is capped by it only while such a transfer is parked).
  heap_.push_back(Parked{look, easy, generation});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
}

void MultiState::hold_first_attempt(CURL* easy, core::Millis delay) {
  Member* m = member(easy);
  auto remove = api_->multi_remove_handle;
  if (m == nullptr || remove == nullptr) return;
  {
    LibcurlScope scope(*api_);
    if (remove(multi_, easy) != CURLM_OK) return;
  }
  m->transfer->hold_first_attempt();
  // Should libcurl refuse it when it is due, the host gets a DONE with this code.
  park(easy, between_attempts::hold(delay, CURLE_FAILED_INIT, Clock::now()));
  update_host_timer();
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

long MultiState::clamp_timeout_now(long timeout_ms) const {
  // A paused replay is resumed by our wrappers: keep the host's loop coming back.
  constexpr long kReplayPoll = 100;
  if (!replaying_.empty() && (timeout_ms < 0 || timeout_ms > kReplayPoll)) timeout_ms = kReplayPoll;
  auto due = ms_until_due();
  if (!due) return timeout_ms;
  if (timeout_ms < 0) return *due;
  return std::min(timeout_ms, *due);
}

void MultiState::readd_due_now() {
  auto now = Clock::now();
  for (;;) {
    discard_stale_heap_top();
    if (heap_.empty() || heap_.front().due > now) break;
    Parked next = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    heap_.pop_back();
    look_at(next.easy, next.generation, now);
  }
}

void MultiState::look_at(CURL* easy, std::uint64_t generation, Clock::time_point now) {
  Member* m = member(easy);
  if (m == nullptr) {
    parked_.erase(easy);
    return;
  }
  Entry& entry = parked_[easy];
  Transfer* transfer = m->transfer;
  // The step between attempts, as the easy loop takes it; only the waiting is ours: in the heap.
  const between_attempts::Look look = between_attempts::look(*transfer, entry.retry, now);
  if (look.kind == between_attempts::Look::Kind::wait) {
    schedule(easy, generation, look.until);
    return;
  }
  CURLMsg msg{};
  msg.msg = CURLMSG_DONE;
  msg.easy_handle = easy;
  msg.data.result = entry.retry.last_code;
  parked_.erase(easy);
  if (look.kind == between_attempts::Look::Kind::done) {
    finish(*m, msg, look.step);
    return;
  }
  transfer->prepare_next_attempt();
  auto add = api_->multi_add_handle;
  CURLMcode added = CURLM_BAD_FUNCTION_ARGUMENT;
  if (add) {
    LibcurlScope scope(*api_);
    added = add(multi_, easy);
  }
  if (added != CURLM_OK) {
    // libcurl would not take it back: the host gets the last attempt's result.
    transfer->end();
    enqueue(msg, m);
  }
}

void MultiState::drain() {
  auto info_read = api_->multi_info_read;
  auto remove = api_->multi_remove_handle;
  if (info_read == nullptr) return;
  // Until the loop below reads nullptr (an exception leaves it false).
  read_to_end_ = false;
  if (!replaying_.empty()) resume_replays();  // tested here: drain runs after every host call
  for (;;) {
    CURLMsg* msg;
    int left = 0;
    {
      LibcurlScope scope(*api_);
      msg = info_read(multi_, &left);
    }
    if (msg == nullptr) {
      read_to_end_ = true;
      break;
    }
    CURLMsg copy = *msg;  // the pointer dies at the next libcurl call
    Member* m = member(copy.easy_handle);
    if (m == nullptr || copy.msg != CURLMSG_DONE || !m->transfer->running()) {
      enqueue(copy, m);
      continue;
    }
    // A transfer that cannot be parked (no remove) has its credential command run at once.
    if (remove == nullptr) m->transfer->set_async_credential(false);
    Transfer::Step step = m->transfer->finish_attempt(copy.data.result);
    m->transfer->set_async_credential(true);
    if (step.retry && remove != nullptr) {
      {
        LibcurlScope scope(*api_);
        remove(multi_, copy.easy_handle);
      }
      park(copy.easy_handle, between_attempts::start(*m->transfer, step.delay, copy.data.result, Clock::now()));
      continue;
    }
    finish(*m, copy, step);
  }
}

void MultiState::finish(Member& member, CURLMsg msg, const Transfer::Step& step) {
  if (step.paused) {
    replaying_.emplace_back(msg.easy_handle, msg);
    return;
  }
  member.transfer->end();
  msg.data.result = step.retry ? msg.data.result : step.code;
  enqueue(msg, &member);
}

void MultiState::resume_replays() {
  if (replaying_.empty()) return;
  auto waiting = std::move(replaying_);
  replaying_.clear();
  for (auto& [easy, msg] : waiting) {
    Member* m = member(easy);
    if (m == nullptr) continue;
    Transfer* transfer = m->transfer;
    if (!transfer->replay_paused()) {
      // Unpaused inside the host's curl_easy_pause (or aborted from its progress callback).
      finish(*m, msg, Transfer::Step{false, core::Millis{0}, transfer->replay_code()});
      continue;
    }
    if (!transfer->unpause_requested()) {
      replaying_.emplace_back(easy, msg);
      continue;
    }
    finish(*m, msg, transfer->resume_replay());
  }
}

void MultiState::progress_paused_replays_now() {
  // By handle, looked up after each call: the host's callback may unpause, or end, a transfer.
  std::vector<CURL*> paused;
  paused.reserve(replaying_.size());
  for (const auto& r : replaying_) paused.push_back(r.first);
  for (CURL* easy : paused) {
    Member* m = member(easy);
    if (m != nullptr && m->transfer->replay_paused()) m->transfer->replay_progress_continue();
  }
}

CURLMsg* MultiState::next_message(int* msgs_in_queue) {
  if (queue_head_ == queue_.size()) {
    if (msgs_in_queue) *msgs_in_queue = 0;
    return nullptr;
  }
  const Queued& front = queue_[queue_head_];
  delivered_ = front.msg;
  if (front.member != nullptr)
    --front.member->queued;
  else
    --unowned_queued_;
  ++queue_head_;
  if (queue_head_ == queue_.size()) {
    queue_.clear();  // keeps its capacity: the next message needs no allocation
    queue_head_ = 0;
  } else if (queue_head_ >= 64 && queue_head_ * 2 >= queue_.size()) {
    // A host that never reads the queue empty: what it has read goes, so the vector stays bounded.
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_));
    queue_head_ = 0;
  }
  if (msgs_in_queue) *msgs_in_queue = static_cast<int>(queue_.size() - queue_head_);
  return &delivered_;
}

void MultiState::drop_queued(CURL* easy, Member* member) {
  // The usual case, a host removing a handle whose message it has read, scans nothing.
  if ((member == nullptr || member->queued == 0) && unowned_queued_ == 0) return;
  const auto unread = queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_);
  auto gone = std::remove_if(unread, queue_.end(), [easy](const Queued& q) { return q.msg.easy_handle == easy; });
  for (auto it = gone; it != queue_.end(); ++it) {
    if (it->member != nullptr)
      --it->member->queued;
    else
      --unowned_queued_;
  }
  queue_.erase(gone, queue_.end());
  if (queue_head_ == queue_.size()) {
    queue_.clear();
    queue_head_ = 0;
  }
}

bool MultiState::forget(CURL* easy) {
  auto it = members_.find(easy);
  Member* m = it == members_.end() ? nullptr : &it->second;
  drop_queued(easy, m);
  bool waiting = false;  // parked or replaying: libcurl no longer has it
  if (!replaying_.empty()) {
    auto replaying =
        std::find_if(replaying_.begin(), replaying_.end(), [easy](const auto& r) { return r.first == easy; });
    if (replaying != replaying_.end()) {
      replaying_.erase(replaying);
      waiting = true;
    }
  }
  if (!parked_.empty() && parked_.erase(easy) > 0) waiting = true;
  if (m != nullptr) m->transfer->end();
  return waiting;
}

void MultiState::forget_all() {
  // Parked, replaying and in-flight transfers alike go back to the host's own settings.
  for (auto& [easy, m] : members_) {
    m.transfer->end();
    m.transfer->set_multi(nullptr);
  }
  members_.clear();
  parked_.clear();
  heap_.clear();
  replaying_.clear();
  queue_.clear();
  queue_head_ = 0;
  unowned_queued_ = 0;
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

void MultiState::update_host_timer_now() {
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
