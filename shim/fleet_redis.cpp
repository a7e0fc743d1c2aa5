#include "shim/fleet_redis.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <mutex>

#include "core/fleet_key.h"
#include "core/fleet_probe.h"
#include "core/retry_budget.h"
#include "shim/clock.h"
#include "shim/fork_guard.h"
#include "shim/log.h"
#include "shim/module_path.h"

namespace curlretry::shim::fleet_redis {
namespace {

using config::LogLevel;

int timeout_ms(Wait wait) { return wait == Wait::thread ? 100 : 25; }
constexpr std::int64_t kRetryConnectMs = 2000;
constexpr std::size_t kPending = 64;
constexpr std::size_t kKeyMax = 256;

// State shared by the process's one link. The mutex is only ever try-locked: a decision never
// waits for another thread's round trip, and a child forked while it was held is not stuck.
struct State {
  std::mutex mutex;
  const fleet::RedisModule* module = nullptr;
  curlretry_redis* connection = nullptr;
  pid_t owner = 0;                  // the process that connected (a fork child must not share it)
  int timeout_ms = 0;               // the connection's bound now (timeout_ms(Wait))
  std::int64_t next_attempt_ms = 0;  // when to try connecting again after a failure
  bool said_down = false;
  std::atomic<std::uint64_t> pending_hash[kPending] = {};
  std::atomic<std::uint32_t> pending_count[kPending] = {};
  std::atomic<std::uint32_t> pending_success[kPending] = {};
  std::atomic<std::uint32_t> pending_refund[kPending] = {};
  // Retries the machine store let go while Redis was silent (note_taken), charged at the next sync.
  std::atomic<std::uint32_t> pending_taken[kPending] = {};
  std::atomic<std::int64_t> pending_sent[kPending] = {};  // latest send of a pending success; 0: none
  // Until when Redis last said the key cools (its raise by this process, or a sync's answer):
  // a success then goes to Redis at once instead of waiting for the next sync or the exit.
  std::atomic<std::int64_t> cooling_until[kPending] = {};
  // The key's text, written once by the thread that claimed the slot, for the flush at exit.
  char pending_key[kPending][kKeyMax] = {};
  std::atomic<bool> pending_named[kPending] = {};
};

// A forked child starts with nothing pending: its parent sends its own counts.
void forget_pending_in_child();

State& state() {
  static State* const s = [] {
    auto* made = new State();  // leaked: used until the last atexit handler
    // Held across fork like every lock of the library: without it a child forked during a round
    // trip could never try-lock it again and would silently lose the shared store.
    guard_across_fork(made->mutex);
    ::pthread_atfork(nullptr, nullptr, forget_pending_in_child);
    return made;
  }();
  return *s;
}

void forget_pending_in_child() {
  State& s = state();
  for (std::size_t i = 0; i < kPending; ++i) {
    s.pending_count[i].store(0, std::memory_order_relaxed);
    s.pending_success[i].store(0, std::memory_order_relaxed);
    s.pending_refund[i].store(0, std::memory_order_relaxed);
    s.pending_taken[i].store(0, std::memory_order_relaxed);
    s.pending_sent[i].store(0, std::memory_order_relaxed);
  }
}

std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  for (char* c = name; *c; ++c) {
    if (*c == ' ') *c = '_';
  }
  return name;
}

// "pid hostname": who ended a cooldown, for `curlretry fleet`.
std::string who() {
  static const std::string host = hostname();
  return std::to_string(::getpid()) + " " + host;
}

}  // namespace

struct Link::Guard {
  std::unique_lock<std::mutex> lock;
  explicit Guard(State& s) : lock(s.mutex, std::try_to_lock) {}
  bool held() const { return lock.owns_lock(); }
};

Link::Link(std::string url) : url_(std::move(url)), endpoint_(fleet::parse_redis_url(url_)) {}

void Link::drop(const char* what, const char* why, bool quiet) {
  State& s = state();
  if (s.connection != nullptr) s.module->free(s.connection);
  s.connection = nullptr;
  s.next_attempt_ms = wall_ms() + kRetryConnectMs;
  if (!s.said_down && !quiet) {
    s.said_down = true;
    log::write(LogLevel::warn, "fleet store " + url_ + ": " + what + ": " + why +
                                   "; deciding with the machine store until it answers again");
  }
}

bool Link::usable(std::int64_t now, Wait wait, bool quiet) {
  State& s = state();
  if (s.module == nullptr) {
    // Leaked, not a static object: the flush at exit may run after static destructors.
    static const fleet::RedisModule* const module =
        new fleet::RedisModule(fleet::load_redis_module(module_path("curlretry-fleet-redis.so")));
    s.module = module;
    if (!module->error.empty() && !quiet) {
      log::write(LogLevel::warn, module->error + "; using the machine store instead");
    }
  }
  if (!s.module->error.empty()) return false;
  if (s.connection != nullptr && s.owner != ::getpid()) {
    // A forked child: the socket is the parent's conversation. Let go of our copy of it.
    s.module->free(s.connection);
    s.connection = nullptr;
  }
  const int bound = timeout_ms(wait);
  if (s.connection != nullptr) {
    if (s.timeout_ms == bound) return true;
    if (s.module->timeout(s.connection, bound) != 0) {
      drop("cannot set its timeout", std::strerror(errno), quiet);
      return false;
    }
    s.timeout_ms = bound;
    return true;
  }
  if (now < s.next_attempt_ms) return false;
  char error[256] = {};
  s.connection =
      s.module->connect(endpoint_.host.c_str(), endpoint_.port, endpoint_.db, bound, error, sizeof error);
  if (s.connection == nullptr) {
    drop("cannot connect", error, quiet);
    return false;
  }
  s.timeout_ms = bound;
  s.owner = ::getpid();
  if (s.said_down) {
    s.said_down = false;
    log::write(LogLevel::warn, "fleet store " + url_ + ": reachable again");
  }
  return true;
}

int Link::pending_slot(std::uint64_t key_hash, std::string_view key) {
  State& s = state();
  const bool claim = !key.empty();
  for (std::size_t i = 0; i < kPending; ++i) {
    const std::size_t slot = (key_hash + i) % kPending;
    std::uint64_t h = s.pending_hash[slot].load(std::memory_order_acquire);
    if (claim && h == 0 && s.pending_hash[slot].compare_exchange_strong(h, key_hash, std::memory_order_acq_rel)) {
      h = key_hash;
      if (key.size() < kKeyMax) {
        std::memcpy(s.pending_key[slot], key.data(), key.size());
        s.pending_named[slot].store(true, std::memory_order_release);
      }
    }
    if (h == key_hash) return static_cast<int>(slot);
    if (h == 0) return -1;
  }
  return -1;
}

void Link::note_request(std::uint64_t key_hash, std::string_view key) {
  const int slot = pending_slot(key_hash, key);
  if (slot >= 0) state().pending_count[slot].fetch_add(1, std::memory_order_relaxed);
}

void Link::note_success(std::uint64_t key_hash, std::int64_t sent_ms) {
  const int slot = pending_slot(key_hash, {});  // its request was noted: the slot is there
  if (slot < 0) return;
  State& s = state();
  s.pending_success[slot].fetch_add(1, std::memory_order_relaxed);
  std::int64_t seen = s.pending_sent[slot].load(std::memory_order_relaxed);
  while (seen < sent_ms && !s.pending_sent[slot].compare_exchange_weak(seen, sent_ms, std::memory_order_relaxed)) {
  }
  // Rare: once per cooldown this process knows of. Everyone else's success waits for a sync.
  const std::int64_t until = s.cooling_until[slot].load(std::memory_order_relaxed);
  if (until == 0 || !s.pending_named[slot].load(std::memory_order_acquire)) return;
  const std::int64_t now = wall_ms();
  s.cooling_until[slot].store(0, std::memory_order_relaxed);
  if (until > now) end_cooling(s.pending_key[slot], sent_ms);
}

void Link::end_cooling(const std::string& key, std::int64_t sent_ms) {
  Guard guard(state());
  if (!guard.held() || !usable(wall_ms(), Wait::loop)) return;
  const std::string by = who();
  char error[256] = {};
  int ended = 0;
  if (state().module->end(state().connection, key.c_str(), sent_ms, wall_ms(), by.c_str(), &ended, error,
                          sizeof error) != 0) {
    drop("no answer", error);
  }
}

void Link::note_refund(std::uint64_t key_hash) {
  const int slot = pending_slot(key_hash, {});
  if (slot >= 0) state().pending_refund[slot].fetch_add(1, std::memory_order_relaxed);
}

void Link::note_taken(std::uint64_t key_hash, std::string_view key) {
  const int slot = pending_slot(key_hash, key);
  if (slot >= 0) state().pending_taken[slot].fetch_add(1, std::memory_order_relaxed);
}

void Link::take_pending(std::uint64_t key_hash, curlretry_redis_sync& request) {
  request.add_requests = request.add_successes = request.refunds = request.taken = 0;
  const int slot = pending_slot(key_hash, {});
  if (slot < 0) return;
  take_slot(static_cast<std::size_t>(slot), request);
}

void Link::take_slot(std::size_t slot, curlretry_redis_sync& request) {
  State& s = state();
  request.add_requests = s.pending_count[slot].exchange(0, std::memory_order_relaxed);
  request.add_successes = s.pending_success[slot].exchange(0, std::memory_order_relaxed);
  request.refunds = s.pending_refund[slot].exchange(0, std::memory_order_relaxed);
  request.taken = s.pending_taken[slot].exchange(0, std::memory_order_relaxed);
  request.success_sent_ms = s.pending_sent[slot].exchange(0, std::memory_order_relaxed);
}

std::optional<curlretry_redis_sync> Link::sync(curlretry_redis_sync request, std::uint64_t key_hash, Wait wait) {
  Guard guard(state());
  if (!guard.held() || !usable(wall_ms(), wait)) return std::nullopt;
  // Not put back when no answer comes: a command that timed out may still have run in Redis, so
  // the counts go at most once (a lost count errs toward fewer retries, never more).
  take_pending(key_hash, request);
  const std::string by = who();
  request.who = by.c_str();
  char error[256] = {};
  if (state().module->sync(state().connection, &request, error, sizeof error) != 0) {
    drop("no answer", error);
    return std::nullopt;
  }
  if (const int slot = pending_slot(key_hash, {}); slot >= 0) {
    state().cooling_until[slot].store(request.host_until_ms, std::memory_order_relaxed);
  }
  request.who = nullptr;
  return request;
}

std::optional<Link::Probe> Link::probe(const std::string& key, std::int64_t own_ms, bool failed, Wait wait) {
  Guard guard(state());
  if (!guard.held() || !usable(wall_ms(), wait)) return std::nullopt;
  char error[256] = {};
  int go = 0;
  long long next_ms = 0;
  if (state().module->probe(state().connection, key.c_str(), own_ms, core::fleet_probe::kMinGap.count(),
                            core::fleet_probe::kMaxGap.count(), failed ? 1 : 0, &go, &next_ms, error,
                            sizeof error) != 0) {
    drop("no answer", error);
    return std::nullopt;
  }
  return Probe{go != 0, next_ms};
}

bool Link::cool(const std::string& key, std::int64_t until_ms, int status, Wait wait) {
  Guard guard(state());
  if (!guard.held() || !usable(wall_ms(), wait)) return false;
  const std::string meta = std::to_string(status) + " " + who();
  char error[256] = {};
  if (state().module->cool(state().connection, key.c_str(), until_ms, meta.c_str(), error, sizeof error) != 0) {
    drop("no answer", error);
    return false;
  }
  // A host key's cooldown this process raised: its own success afterwards ends it at once.
  if (const int slot = pending_slot(core::fleet_key::hash(key), {}); slot >= 0) {
    state().cooling_until[slot].store(until_ms, std::memory_order_relaxed);
  }
  return true;
}

void Link::flush_at_exit() {
  // Best effort and silent: a process that only ever succeeded has never synced, and its
  // requests (and the refunds of its retries that succeeded) would otherwise never reach the
  // fleet. One round trip per key with something pending, bounded by the link's timeout.
  Guard guard(state());
  if (!guard.held()) return;
  State& s = state();
  const std::int64_t now = wall_ms();
  for (std::size_t i = 0; i < kPending; ++i) {
    if (!s.pending_named[i].load(std::memory_order_acquire)) continue;
    curlretry_redis_sync request{};
    take_slot(i, request);
    if (request.add_requests == 0 && request.add_successes == 0 && request.refunds == 0 && request.taken == 0) {
      continue;
    }
    if (!usable(now, Wait::loop, true)) return;
    const std::string key(s.pending_key[i]);
    const std::string by = who();
    request.key = key.c_str();
    request.who = by.c_str();
    request.epoch = core::budget::epoch_of(now);
    request.slots = 1;
    request.now_ms = now;
    char error[256] = {};
    if (s.module->sync(s.connection, &request, error, sizeof error) != 0) return;
  }
}

Link* link_for(const std::string& url) {
  static Link* const link = [&url] {
    auto* made = new Link(url);  // one store per process, as configured
    std::atexit([] { link_for({})->flush_at_exit(); });
    return made;
  }();
  return link;
}

}  // namespace curlretry::shim::fleet_redis
