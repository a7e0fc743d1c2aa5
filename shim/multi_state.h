// What the shim keeps per multi handle: transfers parked between attempts (a timer heap), the
// DONE messages the host has yet to read (exactly one per transfer it added), and the host's
// timer callback, so that a socket-action host is woken when a parked transfer is due.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "shim/between_attempts.h"
#include "shim/real_curl.h"
#include "shim/transfer.h"

namespace curlretry::shim {

class MultiState {
 public:
  // `api`: the libcurl that made the multi handle.
  MultiState(CURLM* multi, const real::Api* api) : multi_(multi), api_(api) {}
  // The libcurl that made the handle: the one a call on it goes to, without a caller lookup.
  const real::Api& api() const { return *api_; }

  // A transfer of ours the host added: its state is looked up here, without the registry's
  // lock. The entry outlives a remove (hosts re-add the same handles over and over) and goes
  // when the handle is cleaned up, joins another multi, or this multi is cleaned up.
  void adopt(CURL* easy, Transfer* transfer);
  // The host cleans up `easy` (its transfer goes with it), or added it to another multi (where
  // its transfer now runs): this multi forgets it without touching the transfer.
  void release(CURL* easy);

  // fleet.hold_new: a transfer the host just added waits `delay` before its first attempt.
  // libcurl lets go of it at once (it never started) and it is parked like a retry.
  void hold_first_attempt(CURL* easy, core::Millis delay);

  // Re-adds every parked transfer whose wait is over, or whose key recovered meanwhile (the
  // recovery wake, core/fleet_wake.h): from our wrappers, never in a callback. Inline: every
  // drive asks, and with nothing parked that is one test, not a call and a clock read (issue 27).
  void readd_due() {
    if (!heap_.empty()) readd_due_now();
  }
  // Reads libcurl's DONE messages: retries are parked, final results queued for the host.
  void drain();
  // The last drain() read libcurl's queue to its end, and no paused replay waits for one. libcurl
  // makes messages only while it runs transfers (perform, socket_action), and our wrappers of
  // those drain after the call; multi_api.cpp adds what it did not see (issue 27).
  bool read_to_end() const { return read_to_end_ && replaying_.empty(); }
  // Where the host's curl_multi_info_read skips its drain: the thread, and its count of drives
  // that passed through unseen (made from inside a libcurl callback), when the drain read to the end.
  const void* drained_on = nullptr;
  std::uint64_t drained_mark = 0;
  // The host drove the multi handle (perform, socket_action): as libcurl does for each transfer
  // it runs, the progress callback of every transfer whose replay the host holds paused is
  // called (where a program typically resumes it). Never from curl_multi_info_read.
  void progress_paused_replays() {
    if (!replaying_.empty()) progress_paused_replays_now();
  }
  // The host's curl_multi_info_read.
  CURLMsg* next_message(int* msgs_in_queue);

  // A transfer the host removes (or cleans up). True when it was parked: libcurl no longer has
  // it, so the real curl_multi_remove_handle must not be called.
  bool forget(CURL* easy);
  // The host's curl_multi_cleanup: every parked transfer goes back to the host's settings.
  void forget_all();

  // Transfers the host still waits for that libcurl no longer has: parked between attempts, or
  // a held response whose replay the host paused. They count in running_handles.
  int parked() const { return static_cast<int>(parked_.size() + replaying_.size()); }
  // Milliseconds until the next parked transfer is due (0 when overdue), nullopt when none.
  std::optional<long> ms_until_due() const;
  // min(timeout libcurl asked for, next due), in libcurl's convention (-1 = none). Inline: every
  // poll asks, and with nothing parked or replaying the host's timeout stands (issue 27).
  long clamp_timeout(long timeout_ms) const {
    return heap_.empty() && replaying_.empty() ? timeout_ms : clamp_timeout_now(timeout_ms);
  }
  std::optional<Clock::time_point> next_due();

  // Socket-action hosts.
  curl_multi_timer_callback host_timer = nullptr;
  void* host_timer_data = nullptr;
  static int on_timer(CURLM* multi, long timeout_ms, void* userdata);
  // Arms the host's timer again when the earliest parked transfer changed, so that it calls
  // socket_action(CURL_SOCKET_TIMEOUT) when that transfer is due. Inline: a host without a
  // timer callback (perform and poll) pays one test per drive.
  void update_host_timer() {
    if (host_timer != nullptr) update_host_timer_now();
  }
  // The host called socket_action(CURL_SOCKET_TIMEOUT): its timer fired.
  void host_timer_fired();

  // fdset/select hosts that never ask curl_multi_timeout (pycurl) see no descriptor while every
  // transfer is parked: a timerfd that turns readable when the next one is due wakes them.
  void add_wakeup_fd(fd_set* read_fds, int* max_fd);
  void close_wakeup_fd();

 private:
  struct Parked {
    Clock::time_point due;  // when to look at it: its next attempt, or a heartbeat line before
    CURL* easy;
    std::uint64_t generation;
    bool operator>(const Parked& other) const { return due > other.due; }
  };
  struct Entry {
    std::uint64_t generation;
    between_attempts::PendingRetry retry;  // what it waits for (due: its next look's reason)
  };
  struct Member {
    Transfer* transfer;
    int queued = 0;  // its messages in queue_, so that removing it scans the queue only then
  };
  struct Queued {
    CURLMsg msg;
    Member* member;  // nullptr: a handle that is not ours
  };

  void readd_due_now();
  void progress_paused_replays_now();
  long clamp_timeout_now(long timeout_ms) const;
  void update_host_timer_now();
  Member* member(CURL* easy);
  void enqueue(const CURLMsg& msg, Member* member);
  void park(CURL* easy, const between_attempts::PendingRetry& retry);
  // Pushes the heap entry of a parked transfer, to be looked at `look`.
  void schedule(CURL* easy, std::uint64_t generation, Clock::time_point look);
  // One parked transfer at its look (between_attempts::look): parked again, finished, or re-added.
  void look_at(CURL* easy, std::uint64_t generation, Clock::time_point now);
  void finish(Member& member, CURLMsg msg, const Transfer::Step& step);
  void resume_replays();
  void drop_queued(CURL* easy, Member* member);
  void discard_stale_heap_top();

  CURLM* multi_;
  const real::Api* api_;
  std::vector<Parked> heap_;  // min-heap on due; entries for forgotten transfers are stale
  std::unordered_map<CURL*, Member> members_;  // node-based: Member* stays valid until erased
  std::unordered_map<CURL*, Entry> parked_;
  std::uint64_t next_generation_ = 1;
  std::vector<std::pair<CURL*, CURLMsg>> replaying_;  // DONE withheld until the replay completes
  // From queue_head_ on: the messages the host has yet to read. A vector read from a head, not a
  // deque: a deque frees and allocates a block every few messages as its front moves on, and the
  // success path allocates nothing (issue 27). Emptied when read to the end, compacted past half.
  std::vector<Queued> queue_;
  std::size_t queue_head_ = 0;
  int unowned_queued_ = 0;  // messages in queue_ for handles that are not ours
  CURLMsg delivered_{};  // valid until the host's next info_read, remove or cleanup
  std::optional<Clock::time_point> libcurl_deadline_;  // libcurl's own timer, as it last asked
  std::optional<Clock::time_point> told_due_;          // the parked due the host's timer knows
  int wakeup_fd_ = -1;
  bool read_to_end_ = false;  // see read_to_end()
};

// The host cleans up an easy handle that may still be parked or replaying in `multi`, or adds
// it to another multi: `multi` lets go of it entirely.
void release_from_multi(CURLM* multi, CURL* easy);

}  // namespace curlretry::shim
