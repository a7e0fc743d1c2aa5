#include "shim/fleet_hook.h"

#include <sys/auxv.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "core/cooldown.h"
#include "core/fleet_key.h"
#include "core/fleet_wake.h"
#include "fleet/location.h"
#include "fleet/store.h"
#include "shim/clock.h"
#include "shim/fleet_redis.h"
#include "shim/header_lookup.h"
#include "shim/log.h"
#include "shim/reentry_guard.h"
#include "shim/response_head.h"
#include "shim/runtime.h"

namespace curlretry::shim::fleet_hook {
namespace {

using config::LogLevel;
namespace cooldown = core::cooldown;
namespace fleet_key = core::fleet_key;

constexpr std::size_t kAuthorityMax = 256;

fleet::Store* open_store(const Runtime& runtime) {
  const config::FleetSettings& settings = runtime.config.settings.fleet;
  if (settings.store == config::FleetStore::off) return nullptr;
  // A setuid/setgid process must not create or trust files in a place its caller's environment
  // picked (XDG_RUNTIME_DIR); it retries on its own.
  if (::getauxval(AT_SECURE) != 0) return nullptr;
  try {
    const std::string dir = fleet::store_dir(settings.dir, [](const char* name) { return std::getenv(name); });
    std::string error;
    std::vector<std::string> notes;
    auto store = fleet::Store::open(dir, error, notes);
    for (const auto& note : notes) log::write(LogLevel::warn, note);
    if (!store) {
      log::write(LogLevel::warn, error + "; this process retries on its own (no fleet cooldown or budget)");
      return nullptr;
    }
    return store.release();  // kept for the life of the process, like the runtime
  } catch (...) {
    return nullptr;
  }
}

// Inline: every request asks it twice (count_request, commit_success), issue 27.
[[gnu::always_inline]] inline fleet::Store* store(const Runtime& runtime) {
  if (runtime.config.settings.fleet.store == config::FleetStore::off) return nullptr;
  static fleet::Store* const opened = open_store(runtime);
  return opened;
}

// How long a Redis round trip for this transfer may take: see fleet_redis::Wait.
fleet_redis::Wait waiter(const KeyCache* ledger) {
  return ledger != nullptr && ledger->own_thread ? fleet_redis::Wait::thread : fleet_redis::Wait::loop;
}

// The Redis link when one is configured (the machine store stays the fallback and the local view).
fleet_redis::Link* redis(const Runtime& runtime) {
  const config::FleetSettings& settings = runtime.config.settings.fleet;
  if (settings.store != config::FleetStore::redis) return nullptr;
  return fleet_redis::link_for(settings.redis_url);
}

void warn_full_once() {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true, std::memory_order_relaxed)) {
    log::write(LogLevel::warn, "the fleet table is full; keys that do not fit are retried per process");
  }
}


std::string_view authority(const HostOptions& host, char (&buffer)[kAuthorityMax]) {
  return {buffer, fleet_key::authority_of(host.url, buffer, sizeof buffer)};
}

// The request's key: the handle's cached one when it is for this URL (count_request() fills it
// at the start of each transfer), else parsed from the URL: a transfer parses it once (issue 27).
std::string_view key_of(const HostOptions& host, const KeyCache* cache, char (&buffer)[kAuthorityMax]) {
  if (cache != nullptr && cache->url == host.url) return cache->key;
  return authority(host, buffer);
}

std::optional<std::string_view> credential(const HostOptions& host) {
  for (const curl_slist* h = host.http_header; h != nullptr; h = h->next) {
    if (h->data == nullptr) continue;
    if (auto value = fleet_key::credential_of(h->data)) return value;
  }
  return std::nullopt;
}

// The later of the host's and the credential's cooldowns, from now.
core::Millis key_cooling_left(fleet::Store& s, std::string_view key, const HostOptions& host, std::int64_t now) {
  std::int64_t until = s.cooling(key, now).until_ms;
  if (auto cred = credential(host)) {
    until = std::max(until, s.cooling(fleet_key::credential_key(key, *cred), now).until_ms);
  }
  return cooldown::remaining(until, now);
}

// The status as the decision saw it: without our header callback it may only be in libcurl.
int status_of(const Attempt& a) { return status_seen(*a.api, a.easy, a.status); }

void record_cooldown(const Runtime& runtime, fleet::Store& s, const Attempt& a, std::string_view key,
                     std::int64_t now) {
  cooldown::Signal signal{status_of(a), *a.hints};
  // The transfer read the hints for the status it knew; one it never learned (no body byte and
  // no header callback) comes from libcurl here, and so do the hints only that status needs.
  if (a.status == 0) learn_hints(*a.api, a.easy, signal.status, signal.hints);
  auto wait = cooldown::wait_of(signal, std::chrono::system_clock::now());
  if (!wait || wait->count() == 0) return;
  const std::string cool_key = fleet_key::cooldown_key(key, signal.status, credential(*a.host));
  if (!s.cool(cool_key, now + wait->count(), signal.status, now)) warn_full_once();
  if (cool_key != key) s.note_cred_cooling(key, now);
  if (auto* link = redis(runtime)) link->cool(cool_key, now + wait->count(), signal.status, waiter(a.ledger));
}

// The transfer that just ended gets its answer as a success: the server coped. It earns the key
// credit, and if it was a retry, that retry did not add to an overload: its token goes back. A
// retry that failed again (or gave up for any other reason) keeps its token.
bool succeeded(const Attempt& a, const core::Verdict& verdict) {
  if (verdict.action != core::Action::give_up) return false;
  const int status = status_of(a);
  if (verdict.reason == core::Reason::success) return !cooldown::cools_fleet(status);
  return verdict.reason == core::Reason::committed && core::is_final_success(status);
}

// A success: the key's credit, and the evidence that ends its cooldown (and the cooldown of the
// credential it was sent with, when that host ever had one).
void earn(const Runtime& runtime, fleet::Store& s, const KeyCache& cache, const HostOptions& host) {
  if (s.earn(cache.hash, cache.sent_ms, cache.entry)) {
    if (auto cred = credential(host)) {
      const std::string cred_key = fleet_key::credential_key(cache.key, *cred);
      // The credential's cooldown as this machine knows it (its own raise, or what Redis said):
      // then Redis's copy ends too, one round trip per cooldown.
      if (auto* link = redis(runtime); link != nullptr && s.cooling(cred_key, wall_ms()).until_ms != 0) {
        link->end_cooling(cred_key, cache.sent_ms);
      }
      s.end_cooling(fleet_key::hash(cred_key), cache.sent_ms);
    }
  }
  if (auto* link = redis(runtime)) link->note_success(cache.hash, cache.sent_ms);
}

// A retry that succeeded gives its token back; one that failed keeps it spent.
void settle_charge(const Runtime& runtime, fleet::Store& s, KeyCache& ledger, bool ok) {
  if (!ledger.charge.pending) return;
  const Charge charge = ledger.charge;
  ledger.charge.pending = false;
  if (!ok) return;
  if (charge.machine) s.refund(charge.hash);
  if (charge.redis) {
    if (auto* link = redis(runtime)) link->note_refund(charge.hash);
  }
}

void settle_success(const Runtime& runtime, fleet::Store& s, const Attempt& a, const core::Verdict& verdict) {
  const bool ok = succeeded(a, verdict);
  if (a.ledger == nullptr) return;
  if (ok && !a.ledger->key.empty() && !a.ledger->earned) {
    earn(runtime, s, *a.ledger, *a.host);
    a.ledger->earned = true;
  }
  settle_charge(runtime, s, *a.ledger, ok);
}

// The attempt failed in a way a retry answers (or would have, within the request's limits; or
// an overload status delivered as it is, e.g. by a request allowed one attempt): the key's failing
// run goes on, and the request learns whether it was sent into an outage.
bool failed(const core::Verdict& verdict, int status) {
  if (verdict.action == core::Action::retry || cooldown::cools_fleet(status)) return true;
  switch (verdict.reason) {
    case core::Reason::exhausted:
    case core::Reason::max_elapsed:
    case core::Reason::deadline:
    case core::Reason::retry_after_too_long:
    case core::Reason::cooldown:
    case core::Reason::budget: return true;
    default: return false;
  }
}

void note_failure(const Runtime& runtime, fleet::Store& s, const Attempt& a, const core::Verdict& verdict,
                  std::string_view key, std::uint64_t hash, std::int64_t now) {
  const bool probe = a.ledger != nullptr && a.ledger->probe;
  if (a.ledger != nullptr) a.ledger->probe = false;
  if (!failed(verdict, status_of(a))) return;
  // The fleet's probe failed: the next one goes a whole spacing after this answer (the machine's
  // word and, with Redis, the fleet's: one bounded round trip per probe).
  if (probe) {
    s.probe_failed(hash, now);
    if (auto* link = redis(runtime)) link->probe(std::string(key), 0, true, waiter(a.ledger));
  }
  s.note_failure(hash, now);
  // Sticky for the request: once it met the outage, the rest of its retries are paced.
  if (a.ledger != nullptr && a.ledger->born_ms != 0 && core::budget::met_outage(s.run(hash), a.ledger->born_ms)) {
    a.ledger->paced = true;
  }
}

}  // namespace

bool active(const Runtime& runtime) { return store(runtime) != nullptr; }

void count_request(const Runtime& runtime, const HostOptions& host, KeyCache& cache) {
  fleet::Store* s = store(runtime);
  cache.charge.pending = false;
  cache.probe = false;
  cache.paced = false;
  cache.woken = false;
  cache.earned = false;
  if (s == nullptr) return;
  if (cache.url != host.url) {
    char buffer[kAuthorityMax];
    cache.key = authority(host, buffer);
    cache.hash = fleet_key::hash(cache.key);
    cache.url = host.url;
  }
  if (cache.key.empty()) return;
  cache.sent_ms = wall_ms();
  cache.born_ms = cache.sent_ms;
  if (!s->count(cache.hash, cache.key, false, cache.sent_ms, cache.entry)) warn_full_once();
  if (auto* link = redis(runtime)) link->note_request(cache.hash, cache.key);
}

void count_success(const Runtime& runtime, const HostOptions& host, const KeyCache& cache) {
  if (cache.earned || cache.key.empty()) return;  // credited at its commit: the usual success
  fleet::Store* s = store(runtime);
  if (s == nullptr) return;
  earn(runtime, *s, cache, host);
}

void commit_success(const Runtime& runtime, const HostOptions& host, KeyCache& cache, int status) {
  if (cache.earned || status < 200 || status >= 400 || cooldown::cools_fleet(status)) return;
  fleet::Store* s = store(runtime);
  if (s == nullptr || cache.key.empty()) return;
  earn(runtime, *s, cache, host);
  cache.earned = true;
  settle_charge(runtime, *s, cache, true);
}

core::Millis cooling_left(const Runtime& runtime, const HostOptions& host, const KeyCache* cache) {
  fleet::Store* s = store(runtime);
  if (s == nullptr) return core::Millis{0};
  char buffer[kAuthorityMax];
  const std::string_view key = key_of(host, cache, buffer);
  if (key.empty()) return core::Millis{0};
  return key_cooling_left(*s, key, host, wall_ms());
}

core::Millis hold_new_wait(const Runtime& runtime, const HostOptions& host,
                           std::optional<std::chrono::steady_clock::time_point> deadline, const KeyCache* cache) {
  fleet::Store* s = store(runtime);
  if (s == nullptr) return core::Millis{0};
  char buffer[kAuthorityMax];
  const std::string_view key = key_of(host, cache, buffer);
  if (key.empty()) return core::Millis{0};
  // A cooldown that outlasts the program's own deadline is not waited for at all: holding the
  // request until its timeout would only turn it into a timeout.
  const core::Millis wait = key_cooling_left(*s, key, host, wall_ms());
  if (wait >= runtime.config.defaults.max_elapsed) return core::Millis{0};
  if (deadline && wait >= std::chrono::duration_cast<core::Millis>(*deadline - std::chrono::steady_clock::now())) {
    return core::Millis{0};
  }
  return wait;
}

namespace {

core::fleet_verdict::Limits limits_of(const Runtime& runtime, const core::Policy& policy,
                                      std::optional<core::Millis> time_left) {
  return core::fleet_verdict::limits_for(policy, runtime.config.settings.persistent, time_left);
}

}  // namespace

void settle(const Runtime& runtime, const Attempt& a, core::Verdict& verdict) {
  fleet::Store* s = store(runtime);
  if (s == nullptr) return;
  char buffer[kAuthorityMax];
  const std::string_view key = key_of(*a.host, a.ledger, buffer);
  if (key.empty()) return;
  const std::int64_t now = wall_ms();
  settle_success(runtime, *s, a, verdict);
  note_failure(runtime, *s, a, verdict, key,
               a.ledger != nullptr && a.ledger->key == key ? a.ledger->hash : fleet_key::hash(key), now);
  if (cooldown::cools_fleet(status_of(a))) record_cooldown(runtime, *s, a, key, now);
  if (verdict.action != core::Action::retry) return;
  namespace fv = core::fleet_verdict;
  const fv::Gate g =
      fv::plan(verdict.delay, key_cooling_left(*s, key, *a.host, now), limits_of(runtime, *a.policy, a.time_left));
  if (g.kind == fv::Kind::give_up_cooldown) {
    verdict.action = core::Action::give_up;
    verdict.reason = core::Reason::cooldown;
    return;
  }
  if (g.wait > verdict.delay) {
    verdict.what += " (fleet cooldown)";
    // Held by the fleet's cooldown well beyond its own wait: part of the backlog an overload built.
    if (a.ledger != nullptr && fv::joins_backlog(g.wait - verdict.delay)) a.ledger->paced = true;
  }
  verdict.delay = g.wait;
}

namespace {

// When the retry's request sent its first attempt: a token that is there goes to the youngest
// request waiting for one (core/token_queue.h). 0: unknown, it waits as the oldest.
std::int64_t born_of(const GateFacts& f) { return f.ledger != nullptr ? f.ledger->born_ms : 0; }

// The Redis round trip at send: the fleet's cooldowns (learnt by the local view) and the
// retry's token. nullopt: no answer, the machine store decides.
struct RedisTake {
  core::Millis cooling{0};
  bool allowed = false;
  std::optional<core::Millis> eta;
};

std::optional<RedisTake> redis_take(const Runtime& runtime, fleet::Store& s, const GateFacts& f, std::string_view key,
                                    std::int64_t now) {
  auto* link = redis(runtime);
  if (link == nullptr) return std::nullopt;
  const core::budget::Budget& budget = runtime.config.settings.fleet.budget;
  const auto cred = credential(*f.host);
  const std::string cred_key = cred ? fleet_key::credential_key(key, *cred) : std::string();
  curlretry_redis_sync request{};
  const std::string host_key(key);
  request.key = host_key.c_str();
  request.cred_key = cred ? cred_key.c_str() : nullptr;
  request.epoch = core::budget::epoch_of(now);
  request.slots = static_cast<unsigned>(core::budget::slots_in(budget.window));
  request.want_retry = 1;
  request.percent = budget.percent;
  request.reserve = budget.reserve;
  request.window_ms = budget.window.count();
  request.again = f.number >= 3 ? 1 : 0;
  request.born_ms = born_of(f);
  request.now_ms = now;
  auto answer = link->sync(request, fleet_key::hash(key), waiter(f.ledger));
  if (!answer) return std::nullopt;
  // The local view learns the fleet's cooldowns, for the next look.
  if (answer->host_until_ms > now) s.cool(key, answer->host_until_ms, 0, now);
  if (cred && answer->cred_until_ms > now) s.cool(cred_key, answer->cred_until_ms, 0, now);
  RedisTake take;
  take.cooling =
      std::max(cooldown::remaining(answer->host_until_ms, now), cooldown::remaining(answer->cred_until_ms, now));
  take.allowed = answer->allowed != 0;
  if (!take.allowed) {
    core::budget::Bucket bucket{static_cast<std::uint32_t>(std::min<unsigned long long>(answer->tokens, 0xffffffffu)),
                                1};
    take.eta = core::budget::eta(bucket, budget, 0);
  }
  return take;
}

// What gate() knows once it found the key in the store, for its two last steps.
struct GateContext {
  const Runtime& runtime;
  fleet::Store& s;
  const GateFacts& f;
  std::string_view key;
  std::uint64_t hash;
  std::int64_t now;
  core::Millis cooling;
  const core::fleet_verdict::Limits& limits;
};

// A key that fails outright: the retry claims the fleet's probe or waits for it (no token).
// nullopt: the token decides (no probe word for the key, a full table; or a young run's probe
// that would give the retry up, core::fleet_verdict::probe_stands).
std::optional<core::fleet_verdict::Gate> probe_gate(const GateContext& c) {
  namespace fv = core::fleet_verdict;
  std::optional<core::fleet_probe::Claim> claim = c.s.claim_probe(
      c.hash, c.now, c.f.own_wait, born_of(c.f), core::fleet_probe::outage_age(c.limits.persistent));
  if (claim && claim->go) {
    if (auto* link = redis(c.runtime)) {
      if (const auto fleet = link->probe(std::string(c.key), c.f.own_wait.count(), false, waiter(c.f.ledger));
          fleet && !fleet->go) {
        c.s.defer_probe(c.hash, c.now, core::Millis{fleet->wait_ms});
        claim = core::fleet_probe::Claim{false, core::Millis{fleet->wait_ms}, {}};
      }
    }
  }
  if (!claim) return std::nullopt;
  const fv::Gate g = fv::at_probe(c.cooling, claim->go ? std::nullopt : std::optional<core::Millis>(claim->wait),
                                  c.f.waited, c.limits);
  if (!fv::probe_stands(g, c.s.run(c.hash), c.now)) return std::nullopt;
  if (g.kind == fv::Kind::go) {
    if (!c.s.count(c.hash, c.key, true, c.now)) warn_full_once();
    if (c.f.ledger != nullptr) {
      c.f.ledger->charge = Charge{};
      c.f.ledger->sent_ms = c.now;
      c.f.ledger->probe = !g.over_budget;  // over budget: it goes beside the probe, not as it
    }
  } else if (g.kind == fv::Kind::wait_token && c.f.ledger != nullptr) {
    c.f.ledger->paced = true;
  }
  return g;
}

// A paced retry takes its token: from Redis when it answers, else from the machine store.
core::fleet_verdict::Gate token_gate(const GateContext& c) {
  namespace fv = core::fleet_verdict;
  Charge charge{true, false, false, c.hash};
  fv::Bucket token;
  core::Millis cooling = c.cooling;
  if (auto fleet = redis_take(c.runtime, c.s, c.f, c.key, c.now)) {
    charge.redis = true;
    token = fv::Bucket{fleet->allowed, fleet->eta};
    // Redis decided for the fleet; the machine store only counts the retry for `curlretry fleet`.
    if (fleet->allowed && !c.s.count(c.hash, c.key, true, c.now)) warn_full_once();
    if (fleet->cooling > cooling) {
      cooling = fleet->cooling;
      if (fleet->allowed) {
        if (auto* link = redis(c.runtime)) link->note_refund(c.hash);  // not going yet: the token goes back
        token = fv::Bucket{false, core::Millis{0}};
      }
    }
  } else {
    std::optional<core::Millis> eta;
    auto taken = c.s.take_retry(c.hash, c.key, c.runtime.config.settings.fleet.budget, c.now, c.f.number >= 3, &eta,
                                born_of(c.f));
    if (!taken) {
      warn_full_once();
      return fv::Gate{};  // the key does not fit the table: this process decides alone
    }
    charge.machine = true;
    token = fv::Bucket{*taken, eta};
  }
  const fv::Gate g = fv::at_send(cooling, token, c.f.waited, c.limits);
  if (g.over_budget && !c.s.count(c.hash, c.key, true, c.now)) warn_full_once();  // counted, not charged
  if (g.kind == fv::Kind::go && !g.over_budget && charge.machine) {
    // Redis (configured, silent now) is charged for it with the next sync, and refunded as usual.
    if (auto* link = redis(c.runtime)) {
      link->note_taken(c.hash, c.key);
      charge.redis = true;
    }
  }
  if (g.kind == fv::Kind::go && c.f.ledger != nullptr) {
    c.f.ledger->charge = g.over_budget ? Charge{} : charge;
    c.f.ledger->sent_ms = c.now;
  } else if (token.taken && charge.machine) {
    c.s.refund(c.hash);  // a cooldown raised meanwhile holds it back: the token is not spent
  }
  return g;
}

}  // namespace

core::fleet_verdict::Gate gate(const Runtime& runtime, const GateFacts& f) {
  namespace fv = core::fleet_verdict;
  fleet::Store* s = store(runtime);
  if (s == nullptr || f.policy == nullptr) return fv::Gate{};
  char buffer[kAuthorityMax];
  const std::string_view key = key_of(*f.host, f.ledger, buffer);
  if (key.empty()) return fv::Gate{};
  const std::int64_t now = wall_ms();
  // A token is waited for as long as one wait of the retry's own policy may last (backoff.max_ms,
  // core::fleet_verdict::limits_for), on any key. The fresh failures a long queue of waiters
  // would take the recovery's tokens from get them first (core/token_queue.h); a shorter wait
  // (one more wait of its own backoff, at least a second) gave up retries the fleet-off process
  // saved whenever a cooldown had kept the key quiet for a second with the bucket spent
  // (test_multi_hosts' mix: 6 of 9 transfers, `budget` after 1 attempt).
  fv::Limits limits = limits_of(runtime, *f.policy, f.time_left);
  limits.answer_cut = f.answer_cut;
  core::Millis cooling = key_cooling_left(*s, key, *f.host, now);
  // A held first attempt waits for the cooldown only: it takes no token.
  if (f.number < 2) {
    const fv::Gate g = fv::at_send(cooling, fv::Bucket{true, {}}, f.waited, limits);
    if (g.kind == fv::Kind::go && f.ledger != nullptr) f.ledger->sent_ms = now;
    return g;
  }
  // Still cooling: no token is taken for a retry that is not going yet.
  if (const fv::Gate g = fv::at_send(cooling, fv::Bucket{true, {}}, f.waited, limits); g.kind != fv::Kind::go) {
    if (g.kind == fv::Kind::wait_cooldown && f.ledger != nullptr && fv::joins_backlog(f.waited.cooldown + g.wait)) {
      f.ledger->paced = true;  // as in settle()
    }
    return g;
  }
  const std::uint64_t hash = fleet_key::hash(key);
  // A key that answered a request with a success within the last second is not in an outage:
  // the budget does not pace its retries (they take no token; core::budget::kHealthyWithin) —
  // unless this request met the outage (or was woken from it by the recovery): the outage's
  // backlog goes at the budget's pace, a token each, given back as its retries succeed.
  const bool healthy = s->healthy(hash, now);
  // A woken retry is paced only for the rest of the backoff the wake cut short: past that it is
  // where its own backoff would have sent it, and goes as it would have then.
  const bool paced = f.ledger != nullptr &&
                     (f.ledger->paced || (f.ledger->woken && f.waited.token + f.waited.probe < f.ledger->woken_early));
  if (healthy && !paced) {
    if (!s->count(hash, key, true, now)) warn_full_once();
    if (f.ledger != nullptr) {
      f.ledger->charge = Charge{};
      f.ledger->sent_ms = now;
    }
    return fv::Gate{};
  }
  const GateContext c{runtime, *s, f, key, hash, now, cooling, limits};
  // The key fails outright (probe_gate): neither the bank nor the trickle, one retry at a time
  // fleet-wide goes as the probe (core/fleet_probe.h), the rest wait for it and, once it found the key answering,
  // go as the outage's backlog (paced: a token each, given back as they succeed). Whether the key
  // fails outright is this machine's store's word. With Redis, the machine's claim is then asked
  // of the fleet (one probe for every machine): the machine's winner alone makes the round trip,
  // and a fleet's "wait" defers the machine's next claim to the fleet's schedule; without an
  // answer the machine's claim stands (never a second series beside the fleet's).
  if (!healthy) {
    if (auto g = probe_gate(c)) return *g;
  }
  return token_gate(c);
}

void note_parked(const Runtime& runtime, KeyCache& cache) {
  cache.parked_stamp = 0;
  cache.woken_early = core::Millis{0};
  cache.woken = false;
  fleet::Store* s = store(runtime);
  if (s == nullptr || cache.key.empty() || cache.server_wait) return;
  const std::int64_t now = wall_ms();
  cache.parked_stamp = core::fleet_wake::park_stamp(s->healthy(cache.hash, now), now);
}

bool woken(const Runtime& runtime, const KeyCache& cache) {
  if (cache.parked_stamp == 0) return false;
  fleet::Store* s = store(runtime);
  return s != nullptr && core::fleet_wake::woken(cache.parked_stamp, s->success_sent(cache.hash));
}

}  // namespace curlretry::shim::fleet_hook
