// Where a transfer consults the fleet store: counting each new request, holding a new request
// while its key cools down (fleet.hold_new), and after each retry verdict: recording a server's
// cooldown for everyone, stretching the wait to the shared cooldown, and giving up when the
// fleet's retry budget is spent. Every function is a no-op when the store is off or unusable;
// none of them ever fails a transfer because of the store.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/decide.h"
#include "core/fleet_verdict.h"
#include "shim/host_options.h"
#include "shim/real_curl.h"
#include "shim/runtime.h"

namespace curlretry::fleet::layout {
struct Entry;
}

namespace curlretry::shim {

namespace fleet_hook {

// The store is on and open (opening it on the first call).
bool active(const Runtime& runtime);

// A retry that took a budget token and is not settled yet: where the token came from, so that
// it can be given back if the retry succeeds.
struct Charge {
  bool pending = false;
  bool machine = false;    // from the machine store's bucket
  bool redis = false;      // from the Redis bucket
  std::uint64_t hash = 0;  // the key's
};

// A URL's fleet key, remembered while the handle's URL stays the same: a handle reused for one
// endpoint parses it once. Also the handle's retry now under way (one transfer at a time).
struct KeyCache {
  std::string url;
  std::string key;
  std::uint64_t hash = 0;
  // Where the store's entry for the key was found last (fleet::Store::count's hint): the request's
  // count and its success's credit then skip the table's probe.
  fleet::layout::Entry* entry = nullptr;
  std::int64_t sent_ms = 0;  // Unix ms the attempt under way was sent: its success is evidence after that
  Charge charge;
  // This request's retries take a budget token even while the key is healthy: it was woken from its
  // backoff by another request's success (a recovery), or it met its key's outage. Such a backlog
  // goes at the budget's pace, never as one burst. Reset by count_request() (a new request).
  bool paced = false;
  std::int64_t born_ms = 0;  // Unix ms the request's first attempt was sent (core::budget::met_outage)
  bool earned = false;       // the request's success is already credited (at its commit)
  // The retry parked for its backoff (note_parked()): core::fleet_wake::park_stamp, 0 = another
  // request's success does not end its wait; and how much of that wait a wake cut short.
  std::uint32_t parked_stamp = 0;
  core::Millis woken_early{0};
  bool woken = false;  // this retry's wait was ended by the wake: paced while woken_early lasts
  // The retry's wait is the server's word (its Retry-After, or stretched to the fleet's cooldown,
  // which may be one credential's): another request's success does not end it.
  bool server_wait = false;
  // The attempt under way is the fleet's probe of a key that fails outright (core/fleet_probe.h):
  // its failure pushes the next probe out (settle()).
  bool probe = false;
  // The host's own thread waits for this transfer (curl_easy_perform), not a multi loop: a Redis
  // round trip for its retry may take longer (fleet_redis::Wait).
  bool own_thread = false;
};

// A first attempt begins: one request counted against the URL's host. Atomics only once the
// store is open (it opens on the first call of the process) and the key is cached.
void count_request(const Runtime& runtime, const HostOptions& host, KeyCache& cache);

// A transfer's first attempt reached the host as a success (2xx/3xx) on the fast path: the key
// earns percent/100 of a retry token. Atomics only. (Other endings go through settle().)
// It also ends the key's cooldown when the request was sent after the cooldown was raised.
void count_success(const Runtime& runtime, const HostOptions& host, const KeyCache& cache);

// The transfer just committed its response to the host (the first body byte, or the end of a
// bodiless response's headers) with `status`: a 2xx/3xx is the key's success now, not when a long
// stream ends: it earns the key's credit, marks the key healthy, ends a cooldown, and a retry's
// token goes back at once to the retries waiting for one. Atomics only; once per request.
void commit_success(const Runtime& runtime, const HostOptions& host, KeyCache& cache, int status);

// How long a new request should wait before its first attempt (fleet.hold_new and a cooldown on
// its key). Zero when it need not wait, and when the cooldown would outlast the host's
// `deadline` or the defaults' max_elapsed_ms (the request then goes at once).
// `cache`: the handle's, when it has one (the key is then not parsed again). fleet.hold_new is off
// by default: then the success path pays a test here, not a call (issue 27).
core::Millis hold_new_wait(const Runtime& runtime, const HostOptions& host,
                           std::optional<std::chrono::steady_clock::time_point> deadline, const KeyCache* cache);
inline core::Millis hold_new(const Runtime& runtime, const HostOptions& host,
                             std::optional<std::chrono::steady_clock::time_point> deadline,
                             const KeyCache* cache = nullptr) {
  if (!runtime.config.settings.fleet.hold_new) return core::Millis{0};
  return hold_new_wait(runtime, host, deadline, cache);
}

// How long the request's key (host, and its credential) is still cooling down, from the machine
// store (which also holds what Redis last said). `cache` as for hold_new().
core::Millis cooling_left(const Runtime& runtime, const HostOptions& host, const KeyCache* cache = nullptr);

// What an attempt's end looked like, for settle().
struct Attempt {
  const real::Api* api;
  CURL* easy;
  const HostOptions* host;
  const core::Policy* policy;
  int status;
  const core::ResponseHints* hints;       // as the decision read them
  std::optional<core::Millis> time_left;  // before the host's deadline or max_elapsed
  int number;                             // the attempt's (1: the first)
  KeyCache* ledger;                       // the handle's: holds the retry's charge
};

// After core decided: a transfer that succeeded earns its key percent/100 of a token, ends the
// key's cooldown, and if it was a retry gives its token back (one that failed again keeps it); a
// server's cooldown signal is written for the fleet; a retry's delay is stretched to the shared
// cooldown (core::fleet_verdict::plan; it gives up with reason "cooldown" when that does not fit).
// The budget is not asked here: a retry takes its token when its wait is over (gate()).
void settle(const Runtime& runtime, const Attempt& attempt, core::Verdict& verdict);

// A retry's wait is over (or a held first attempt's, `number` 0): the fleet's word on sending it
// now (core::fleet_verdict::at_send over the store's answers). On `go` the retry's token is taken
// and kept in the ledger; on wait_* the caller waits `wait` and asks again; on give_up_budget the
// transfer gives up with reason "budget". Without a usable store: go. On a key that fails
// outright (core::fleet_probe::outage, by this machine's store) no token is taken: the retry goes
// only as the fleet's probe (Redis's when it answers, else this machine's; Gate::probe;
// core::fleet_verdict::at_probe), else waits for it, and is paced (a token) once the key recovers.
struct GateFacts {
  const HostOptions* host;
  const core::Policy* policy;
  std::optional<core::Millis> time_left;  // before the host's deadline or max_elapsed
  int number;                             // the attempt about to go (0: a held first attempt)
  core::fleet_verdict::Waited waited;     // what it waited for the fleet so far
  core::Millis own_wait;                  // the backoff its policy chose before this retry (spaces probes)
  KeyCache* ledger;
  bool answer_cut = false;  // its attempt was stopped by us: no give-up (core::fleet_verdict::Limits)
};
core::fleet_verdict::Gate gate(const Runtime& runtime, const GateFacts& facts);

// The recovery wake (issue 23, core/fleet_wake.h). A retry parks for its backoff: it may be
// woken by its key's next success only when the key was in an outage (no success sent within
// core::budget::kHealthyWithin) when its failed attempt was answered, just before, and when its
// wait is its own backoff (not cache.server_wait); a retry on a healthy key keeps its own
// backoff. Sets cache.parked_stamp (0 without a usable store). One load.
void note_parked(const Runtime& runtime, KeyCache& cache);
// While it waits: a success to its key was sent after its failed attempt was answered. One
// atomic load, no allocation; false when it may not be woken.
bool woken(const Runtime& runtime, const KeyCache& cache);

}  // namespace fleet_hook
}  // namespace curlretry::shim
