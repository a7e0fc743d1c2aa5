// The interposed curl_multi_* entry points. The host's loop keeps running while transfers wait
// between attempts: they are parked outside libcurl, counted in running_handles, and every
// timeout the host sees is shortened to the next due time.
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "shim/caller.h"
#include "shim/fleet_hook.h"
#include "shim/fork_guard.h"
#include "shim/multi_state.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/registry.h"
#include "shim/remembered_lookup.h"
#include "shim/runtime.h"

using namespace curlretry::shim;

// A call from inside libcurl (curl_easy_perform drives its own multi handle through these very
// entry points): straight back to that libcurl, before any of our bookkeeping.
#define CURLRETRY_INSIDE_LIBCURL_PASS(field, fail, ...)             \
  if (const real::Api* inner = running_libcurl()) {                 \
    auto real_fn = inner->field;                                    \
    return real_fn != nullptr ? real_fn(__VA_ARGS__) : (fail);      \
  }

// The same for the calls that run transfers (and so may make libcurl's DONE messages): the
// thread's count of them is bumped, for the host's curl_multi_info_read (unseen_drives).
#define CURLRETRY_INSIDE_LIBCURL_DRIVE(field, fail, ...)            \
  if (const real::Api* inner = running_libcurl()) {                 \
    ++unseen_drives;                                                \
    auto real_fn = inner->field;                                    \
    return real_fn != nullptr ? real_fn(__VA_ARGS__) : (fail);      \
  }

namespace {

// Calls on this thread that ran transfers of some multi handle without our bookkeeping: the ones
// made from inside libcurl (its own, and a program's from a callback libcurl called directly).
// A multi handle they ran may have new messages that no drain of ours read.
constinit __attribute__((tls_model("initial-exec"))) thread_local std::uint64_t unseen_drives = 0;

// Drains `state`, and when it read libcurl's queue to its end, notes where and when: until this
// thread runs a transfer unseen, the host's curl_multi_info_read has nothing to drain.
void drain_and_mark(MultiState* state) {
  state->drain();
  if (state->read_to_end()) {
    state->drained_on = &unseen_drives;
    state->drained_mark = unseen_drives;
  }
}

struct MultiTable {
  std::mutex mutex;
  std::unordered_map<CURLM*, std::unique_ptr<MultiState>> states;
  // Bumped on every insert and erase: a thread's remembered lookup is good while it is unchanged.
  std::atomic<std::uint64_t> epoch{1};
};

// Published once made; nullptr until the first multi handle is made, when no lookup can find one.
constinit std::atomic<MultiTable*> g_multis{nullptr};

MultiTable& multis() {
  // Leaked: multis are cleaned up from atexit handlers.
  static MultiTable* t = [] {
    auto* table = new MultiTable();
    guard_across_fork(table->mutex);
    g_multis.store(table, std::memory_order_release);
    return table;
  }();
  return *t;
}

MultiState* find_multi(CURLM* multi) {
  if (inside_libcurl()) return nullptr;
  // A host drives one multi handle through several calls per transfer. (A multi handle is used
  // by one thread at a time, and cleaning it up while another thread uses it is undefined.)
  __attribute__((tls_model("initial-exec"))) static thread_local RememberedLookup<CURLM*, MultiState*> last;
  // A plain load, not the function-static's guard: every multi call of the host asks this.
  MultiTable* made = g_multis.load(std::memory_order_acquire);
  if (made == nullptr) return nullptr;
  MultiTable& t = *made;
  return remembered_find(last, t.epoch, t.mutex, multi, [&t](CURLM* key) -> MultiState* {
    auto it = t.states.find(key);
    return it == t.states.end() ? nullptr : it->second.get();
  });
}

// The libcurl a host's call on `multi` goes to: the one that made it when it is ours (a host
// drives one multi handle with several calls per transfer, and its maker is known without
// looking the caller's code up; issue 27), else the caller's.
const real::Api& api_for(const MultiState* state, const void* caller) {
  return state != nullptr ? state->api() : real::for_caller(caller);
}

// After the real call: libcurl's messages become retries or host messages; the count includes
// what is parked.
CURLMcode after_drive(MultiState* state, CURLMcode code, int* running) {
  try {
    state->progress_paused_replays();
    drain_and_mark(state);
    state->update_host_timer();
  } catch (...) {
    // Only allocation can fail here, and no exception may reach a C host: the host gets
    // libcurl's answer, and the next call drains again.
  }
  if (running != nullptr) *running += state->parked();
  return code;
}

// Every call that drives transfers (perform, socket_action, ...): parked transfers that are due
// go back into libcurl first, and what libcurl finished in the call becomes retries or host
// messages after it. `timer_fired`: the host's timeout callback fired (CURL_SOCKET_TIMEOUT).
// `state`: the host's multi handle as find_multi() found it (nullptr: not ours).
template <typename Call>
CURLMcode drive_known(const real::Api& api, MultiState* state, int* running, bool timer_fired, Call call) {
  if (state == nullptr) ++unseen_drives;  // curl_multi_socket(_all) from inside libcurl, or not ours
  if (state != nullptr) {
    if (timer_fired) state->host_timer_fired();
    state->readd_due();
  }
  CURLMcode code;
  {
    LibcurlScope scope(api);
    code = call();
  }
  return state ? after_drive(state, code, running) : code;
}

template <typename Call>
CURLMcode drive(const real::Api& api, CURLM* multi, int* running, bool timer_fired, Call call) {
  return drive_known(api, find_multi(multi), running, timer_fired, call);
}

// The host's calls, out of line: the exported entry points below are then only the
// inside-libcurl test and a jump, which is all that libcurl's own calls from inside
// curl_easy_perform pay (no frame to build for a path they never take; issue 27).

// curl_multi_add_handle from the host (or a plugin): to the libcurl that made the handle (api_for).
__attribute__((noinline)) CURLMcode multi_add_handle_from_host(const void* caller, CURLM* multi, CURL* easy) {
  MultiState* state = find_multi(multi);
  const real::Api& api = api_for(state, caller);
  auto add = api.multi_add_handle;
  if (add == nullptr) return CURLM_BAD_HANDLE;
  Transfer* transfer = state ? registry::find(easy) : nullptr;
  CURLM* previous = transfer != nullptr ? transfer->multi() : nullptr;
  // Parked between attempts or replaying its held response, the handle is out of libcurl's
  // multi but still added as far as the host knows: libcurl would refuse it, so do we.
  if (transfer != nullptr && transfer->running() && previous != nullptr) return CURLM_ADDED_ALREADY;
  bool ours = false;
  try {
    ours = transfer != nullptr && transfer->begin(runtime(), false);
  } catch (...) {
    // Out of memory for the transfer's state: `ours` stays false and libcurl runs it unretried.
  }
  CURLMcode code;
  {
    LibcurlScope scope(api);
    code = add(multi, easy);
  }
  // The handle moved from another multi handle: that one lets go of it.
  if (code == CURLM_OK && previous != nullptr && previous != multi) {
    try {
      release_from_multi(previous, easy);
    } catch (...) {
      // Only allocation can fail here, and no exception may reach a C host: the handle is in the
      // new multi all the same.
    }
  }
  if (ours) {
    try {
      if (code == CURLM_OK) {
        state->adopt(easy, transfer);
        const auto hold = fleet_hook::hold_new(runtime(), transfer->host, transfer->deadline(), &transfer->fleet_key());
        if (hold.count() > 0) state->hold_first_attempt(easy, hold);
      } else {
        transfer->end();
      }
    } catch (...) {
      transfer->abandon();  // out of memory for its entry: libcurl runs it without us
    }
  }
  return code;
}

// curl_multi_remove_handle from the host (or a plugin): to the libcurl that made the handle (api_for).
__attribute__((noinline)) CURLMcode multi_remove_handle_from_host(const void* caller, CURLM* multi, CURL* easy) {
  MultiState* state = find_multi(multi);
  const real::Api& api = api_for(state, caller);
  auto remove = api.multi_remove_handle;
  if (remove == nullptr) return CURLM_BAD_HANDLE;
  if (state != nullptr) {
    bool was_parked = false;
    try {
      was_parked = state->forget(easy);
    } catch (...) {
      // Only allocation can fail here: treated as not parked, so libcurl removes the handle itself.
    }
    if (was_parked) return CURLM_OK;
  }
  LibcurlScope scope(api);
  return remove(multi, easy);
}

// curl_multi_perform from the host (or a plugin): to the libcurl that made the handle (api_for).
__attribute__((noinline)) CURLMcode multi_perform_from_host(const void* caller, CURLM* multi, int* running) {
  MultiState* state = find_multi(multi);
  const real::Api& api = api_for(state, caller);
  auto perform = api.multi_perform;
  if (perform == nullptr) return CURLM_BAD_HANDLE;
  return drive_known(api, state, running, false, [&] { return perform(multi, running); });
}

// curl_multi_info_read from the host (or a plugin): to the libcurl that made the handle (api_for).
__attribute__((noinline)) CURLMsg* multi_info_read_from_host(const void* caller, CURLM* multi, int* msgs_in_queue) {
  MultiState* state = find_multi(multi);
  if (state == nullptr) {
    const real::Api& api = real::for_caller(caller);
    auto info_read = api.multi_info_read;
    if (info_read == nullptr) return nullptr;
    LibcurlScope scope(api);
    return info_read(multi, msgs_in_queue);
  }
  try {
    // Messages libcurl made in a call we did not see (from inside a libcurl callback, or on
    // another thread) or not read yet; none when the last drain read to the end on this thread
    // since its last unseen drive (the usual host loop: perform, then info_read until nullptr).
    if (!state->read_to_end() || state->drained_on != &unseen_drives || state->drained_mark != unseen_drives)
      drain_and_mark(state);
  } catch (...) {
    // Only allocation can fail here, and no exception may reach a C host: what is already
    // queued is still handed out, the rest on the next call.
  }
  return state->next_message(msgs_in_queue);
}

// curl_multi_poll from the host (or a plugin): to the libcurl that made the handle (api_for).
__attribute__((noinline)) CURLMcode multi_poll_from_host(const void* caller, CURLM* multi, struct curl_waitfd extra_fds[],
                                                                unsigned int extra_nfds, int timeout_ms, int* numfds) {
  MultiState* state = find_multi(multi);
  const real::Api& api = api_for(state, caller);
  auto poll = api.multi_poll;
  if (poll == nullptr) return CURLM_BAD_HANDLE;
  if (state != nullptr) timeout_ms = static_cast<int>(state->clamp_timeout(timeout_ms));
  LibcurlScope scope(api);
  return poll(multi, extra_fds, extra_nfds, timeout_ms, numfds);
}

// What a curl_multi_setopt call passed, by the option's type.
struct MultiOptionValue {
  long number = 0;
  void* pointer = nullptr;
  void (*function)() = nullptr;
  curl_off_t offset = 0;
};

// Inline: libcurl's own call from every curl_easy_perform passes here.
inline CURLMcode forward_multi_option(real::multi_setopt_fn setopt, CURLM* multi, CURLMoption option,
                                      const MultiOptionValue& value) {
  if (option < CURLOPTTYPE_OBJECTPOINT) return setopt(multi, option, value.number);
  if (option < CURLOPTTYPE_FUNCTIONPOINT) return setopt(multi, option, value.pointer);
  if (option < CURLOPTTYPE_OFF_T) return setopt(multi, option, value.function);
  return setopt(multi, option, value.offset);
}

// curl_multi_setopt from the host (or a plugin): its libcurl, found by its return address.
__attribute__((noinline)) CURLMcode multi_setopt_from_host(const void* caller, CURLM* multi, CURLMoption option,
                                                           MultiOptionValue value) {
  const real::Api& api = real::for_caller(caller);
  auto setopt = api.multi_setopt;
  if (setopt == nullptr) return CURLM_BAD_HANDLE;
  MultiState* state = find_multi(multi);
  LibcurlScope scope(api);
  if (state != nullptr && option == CURLMOPT_TIMERFUNCTION) {
    state->host_timer = reinterpret_cast<curl_multi_timer_callback>(value.function);
    if (state->host_timer == nullptr) return setopt(multi, option, value.function);
    setopt(multi, CURLMOPT_TIMERDATA, static_cast<void*>(state));
    return setopt(multi, option, &MultiState::on_timer);
  }
  if (state != nullptr && option == CURLMOPT_TIMERDATA) {
    state->host_timer_data = value.pointer;
    if (state->host_timer == nullptr) return setopt(multi, option, value.pointer);
    return CURLM_OK;  // our timer callback is in place and carries the state
  }
  return forward_multi_option(setopt, multi, option, value);
}

}  // namespace

namespace curlretry::shim {

void release_from_multi(CURLM* multi, CURL* easy) {
  if (MultiState* state = find_multi(multi)) state->release(easy);
}

}  // namespace curlretry::shim

extern "C" {

__attribute__((visibility("default"))) CURLM* curl_multi_init(void) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto init = api.multi_init;
  if (init == nullptr) return nullptr;
  CURLM* multi;
  {
    LibcurlScope scope(api);
    multi = init();
  }
  if (multi == nullptr || inside_libcurl()) return multi;
  try {
    if (runtime().active) {
      MultiTable& t = multis();
      std::lock_guard lock(t.mutex);
      t.states[multi] = std::make_unique<MultiState>(multi, &api);
      t.epoch.fetch_add(1, std::memory_order_acq_rel);
    }
  } catch (...) {
    // Out of memory for its state: this multi handle runs as plain libcurl, without retries.
  }
  return multi;
}

__attribute__((visibility("default"))) CURLMcode curl_multi_cleanup(CURLM* multi) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto cleanup = api.multi_cleanup;
  if (!inside_libcurl()) {
    std::unique_ptr<MultiState> doomed;
    {
      MultiTable& t = multis();
      std::lock_guard lock(t.mutex);
      if (auto it = t.states.find(multi); it != t.states.end()) {
        doomed = std::move(it->second);
        t.states.erase(it);
        t.epoch.fetch_add(1, std::memory_order_acq_rel);
      }
    }
    if (doomed) {
      doomed->forget_all();
      doomed->close_wakeup_fd();
    }
  }
  if (cleanup == nullptr) return CURLM_BAD_HANDLE;
  LibcurlScope scope(api);
  return cleanup(multi);
}

__attribute__((visibility("default"))) CURLMcode curl_multi_add_handle(CURLM* multi, CURL* easy) {
  CURLRETRY_INSIDE_LIBCURL_PASS(multi_add_handle, CURLM_BAD_HANDLE, multi, easy)
  return multi_add_handle_from_host(__builtin_return_address(0), multi, easy);
}

__attribute__((visibility("default"))) CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* easy) {
  CURLRETRY_INSIDE_LIBCURL_PASS(multi_remove_handle, CURLM_BAD_HANDLE, multi, easy)
  return multi_remove_handle_from_host(__builtin_return_address(0), multi, easy);
}

__attribute__((visibility("default"))) CURLMcode curl_multi_perform(CURLM* multi, int* running) {
  CURLRETRY_INSIDE_LIBCURL_DRIVE(multi_perform, CURLM_BAD_HANDLE, multi, running)
  return multi_perform_from_host(__builtin_return_address(0), multi, running);
}

__attribute__((visibility("default"))) CURLMcode curl_multi_socket_action(CURLM* multi, curl_socket_t s, int ev_bitmask,
                                                                         int* running) {
  CURLRETRY_INSIDE_LIBCURL_DRIVE(multi_socket_action, CURLM_BAD_HANDLE, multi, s, ev_bitmask, running)
  const real::Api& api = CURLRETRY_CALLER_API();
  auto socket_action = api.multi_socket_action;
  if (socket_action == nullptr) return CURLM_BAD_HANDLE;
  return drive(api, multi, running, s == CURL_SOCKET_TIMEOUT,
               [&] { return socket_action(multi, s, ev_bitmask, running); });
}

// Old binaries still call the pre-7.15.4 entry point; multi.h maps the name to socket_action.
#undef curl_multi_socket
__attribute__((visibility("default"))) CURLMcode curl_multi_socket(CURLM* multi, curl_socket_t s, int* running) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto socket = api.multi_socket;
  if (socket == nullptr) return CURLM_BAD_HANDLE;
  return drive(api, multi, running, false, [&] { return socket(multi, s, running); });
}

__attribute__((visibility("default"))) CURLMcode curl_multi_socket_all(CURLM* multi, int* running) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto socket_all = api.multi_socket_all;
  if (socket_all == nullptr) return CURLM_BAD_HANDLE;
  return drive(api, multi, running, false, [&] { return socket_all(multi, running); });
}

__attribute__((visibility("default"))) CURLMsg* curl_multi_info_read(CURLM* multi, int* msgs_in_queue) {
  CURLRETRY_INSIDE_LIBCURL_PASS(multi_info_read, nullptr, multi, msgs_in_queue)
  return multi_info_read_from_host(__builtin_return_address(0), multi, msgs_in_queue);
}

__attribute__((visibility("default"))) CURLMcode curl_multi_poll(CURLM* multi, struct curl_waitfd extra_fds[],
                                                                unsigned int extra_nfds, int timeout_ms, int* numfds) {
  CURLRETRY_INSIDE_LIBCURL_PASS(multi_poll, CURLM_BAD_HANDLE, multi, extra_fds, extra_nfds, timeout_ms, numfds)
  return multi_poll_from_host(__builtin_return_address(0), multi, extra_fds, extra_nfds, timeout_ms, numfds);
}

__attribute__((visibility("default"))) CURLMcode curl_multi_wait(CURLM* multi, struct curl_waitfd extra_fds[],
                                                                unsigned int extra_nfds, int timeout_ms, int* numfds) {
  CURLRETRY_INSIDE_LIBCURL_PASS(multi_wait, CURLM_BAD_HANDLE, multi, extra_fds, extra_nfds, timeout_ms, numfds)
  const real::Api& api = CURLRETRY_CALLER_API();
  auto wait = api.multi_wait;
  if (wait == nullptr) return CURLM_BAD_HANDLE;
  MultiState* state = find_multi(multi);
  if (state != nullptr && state->parked() > 0) {
    // curl_multi_wait returns at once when libcurl has no socket to wait on, which is exactly
    // the case while every transfer is parked; curl_multi_poll sleeps instead.
    auto poll = api.multi_poll;
    int clamped = static_cast<int>(state->clamp_timeout(timeout_ms));
    if (poll != nullptr) {
      LibcurlScope scope(api);
      return poll(multi, extra_fds, extra_nfds, clamped, numfds);
    }
    timeout_ms = clamped;
  }
  LibcurlScope scope(api);
  return wait(multi, extra_fds, extra_nfds, timeout_ms, numfds);
}

__attribute__((visibility("default"))) CURLMcode curl_multi_fdset(CURLM* multi, fd_set* read_fds, fd_set* write_fds,
                                                                 fd_set* exc_fds, int* max_fd) {
  CURLRETRY_INSIDE_LIBCURL_PASS(multi_fdset, CURLM_BAD_HANDLE, multi, read_fds, write_fds, exc_fds, max_fd)
  const real::Api& api = CURLRETRY_CALLER_API();
  auto fdset = api.multi_fdset;
  if (fdset == nullptr) return CURLM_BAD_HANDLE;
  CURLMcode code;
  {
    LibcurlScope scope(api);
    code = fdset(multi, read_fds, write_fds, exc_fds, max_fd);
  }
  MultiState* state = find_multi(multi);
  if (state != nullptr && code == CURLM_OK && state->parked() > 0) state->add_wakeup_fd(read_fds, max_fd);
  return code;
}

__attribute__((visibility("default"))) CURLMcode curl_multi_timeout(CURLM* multi, long* timeout_ms) {
  CURLRETRY_INSIDE_LIBCURL_PASS(multi_timeout, CURLM_BAD_HANDLE, multi, timeout_ms)
  const real::Api& api = CURLRETRY_CALLER_API();
  auto timeout = api.multi_timeout;
  if (timeout == nullptr) return CURLM_BAD_HANDLE;
  CURLMcode code;
  {
    LibcurlScope scope(api);
    code = timeout(multi, timeout_ms);
  }
  MultiState* state = find_multi(multi);
  if (state != nullptr && code == CURLM_OK && timeout_ms != nullptr) *timeout_ms = state->clamp_timeout(*timeout_ms);
  return code;
}

__attribute__((visibility("default"))) CURLMcode curl_multi_setopt(CURLM* multi, CURLMoption option, ...) {
  va_list args;
  va_start(args, option);
  MultiOptionValue value;
  if (option < CURLOPTTYPE_OBJECTPOINT) value.number = va_arg(args, long);
  else if (option < CURLOPTTYPE_FUNCTIONPOINT) value.pointer = va_arg(args, void*);
  else if (option < CURLOPTTYPE_OFF_T) value.function = va_arg(args, void (*)());
  else value.offset = va_arg(args, curl_off_t);
  va_end(args);
  // libcurl's own call (curl_easy_perform sets CURLMOPT_MAXCONNECTS on its multi each time).
  if (const real::Api* inner = running_libcurl())
    return inner->multi_setopt != nullptr ? forward_multi_option(inner->multi_setopt, multi, option, value)
                                          : CURLM_BAD_HANDLE;
  return multi_setopt_from_host(__builtin_return_address(0), multi, option, value);
}

}  // extern "C"
