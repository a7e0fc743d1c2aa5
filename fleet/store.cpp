#include "fleet/store.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>

#include "core/cooldown.h"
#include "core/fleet_key.h"
#include "core/token_queue.h"
#include "fleet/location.h"

namespace curlretry::fleet {
namespace {

using layout::Entry;
namespace token_queue = core::token_queue;
namespace budget = core::budget;

constexpr auto kRelaxed = std::memory_order_relaxed;

// An entry nobody has touched for longer than any window and whose cooldown is over may be
// taken by another key.
bool stale(const Entry& e, std::int64_t now_ms) {
  if (e.cool_until_ms.load(kRelaxed) > now_ms) return false;
  const std::uint32_t age = budget::epoch_of(now_ms) - e.last_epoch.load(kRelaxed);
  return age > static_cast<std::uint32_t>(budget::kSlots);
}

void write_name(Entry& e, std::string_view key) {
  for (std::size_t w = 0; w < layout::kNameWords; ++w) {
    std::uint64_t word = 0;
    for (std::size_t b = 0; b < 8; ++b) {
      const std::size_t i = w * 8 + b;
      if (i < key.size()) word |= static_cast<std::uint64_t>(static_cast<unsigned char>(key[i])) << (8 * b);
    }
    e.name[w].store(word, kRelaxed);
  }
}

void reset_entry(Entry& e) {
  e.cool_until_ms.store(0, kRelaxed);
  e.cool_set_ms.store(0, kRelaxed);
  e.cool_status.store(0, kRelaxed);
  e.cool_pid.store(0, kRelaxed);
  e.cred_cooling.store(0, kRelaxed);
  e.cool_ended_ms.store(0, kRelaxed);
  e.cool_ended_until_ms.store(0, kRelaxed);
  e.cool_end_pid.store(0, kRelaxed);
  e.success_sent.store(0, kRelaxed);
  for (auto& slot : e.ring) slot.store(0, kRelaxed);
  e.bucket.store(0, kRelaxed);
  e.mark.store(0, kRelaxed);
  e.earned.store(0, kRelaxed);
  e.run_began.store(0, kRelaxed);
  e.run_last.store(0, kRelaxed);
  e.probe.store(0, kRelaxed);
}

}  // namespace

std::unique_ptr<Store> Store::open(const std::string& dir, std::string& error, std::vector<std::string>& notes) {
  error = ensure_private_dir(dir);
  if (!error.empty()) return nullptr;
  Mapping m = map_table(dir);
  notes.insert(notes.end(), m.notes.begin(), m.notes.end());
  if (m.base == nullptr) {
    error = m.error;
    return nullptr;
  }
  return std::unique_ptr<Store>(new Store(std::move(m)));
}

std::unique_ptr<Store> Store::open_existing(const std::string& dir, std::string& error) {
  Mapping m = map_existing_table(dir);
  if (m.base == nullptr) {
    error = m.error;
    return nullptr;
  }
  return std::unique_ptr<Store>(new Store(std::move(m)));
}

Store::~Store() { unmap_table(mapping_); }

Entry* Store::find(std::uint64_t hash) const {
  Entry* table = entries();
  for (std::uint32_t probe = 0; probe < layout::kMaxProbe; ++probe) {
    Entry& e = table[(hash + probe) % layout::kEntries];
    const std::uint64_t h = e.hash.load(std::memory_order_acquire);
    if (h == hash) return &e;
    if (h == 0) return nullptr;
  }
  return nullptr;
}

Entry* Store::find_or_claim(std::uint64_t hash, std::string_view key, std::int64_t now_ms) {
  if (Entry* e = find(hash)) return e;
  Entry* table = entries();
  for (std::uint32_t probe = 0; probe < layout::kMaxProbe; ++probe) {
    Entry& e = table[(hash + probe) % layout::kEntries];
    std::uint64_t h = e.hash.load(std::memory_order_acquire);
    if (h == hash) return &e;
    if (h != 0 && !stale(e, now_ms)) continue;
    // Claim a free entry, or take over a stale one. A process still holding the stale key's
    // entry may add one count to the new key: a bounded error, never a lock.
    if (h != 0) reset_entry(e);
    if (e.hash.compare_exchange_strong(h, hash, std::memory_order_acq_rel)) {
      write_name(e, key);
      e.last_epoch.store(budget::epoch_of(now_ms), kRelaxed);
      return &e;
    }
    if (h == hash) return &e;  // another process claimed it for the same key
  }
  return nullptr;
}

bool Store::count(std::string_view key, bool retry, std::int64_t now_ms) {
  return count(core::fleet_key::hash(key), key, retry, now_ms);
}

bool Store::count(std::uint64_t hash, std::string_view key, bool retry, std::int64_t now_ms) {
  Entry* e = find_or_claim(hash, key, now_ms);
  if (e == nullptr) return false;
  count_in(*e, retry, now_ms);
  return true;
}

bool Store::earn(std::uint64_t hash, std::int64_t sent_ms) {
  Entry* e = find(hash);
  return e != nullptr && earn_in(*e, sent_ms);
}

bool Store::healthy(std::uint64_t hash, std::int64_t now_ms) const {
  const Entry* e = find(hash);
  return e != nullptr && budget::healthy(e->success_sent.load(kRelaxed), now_ms);
}

void Store::note_failure(std::uint64_t hash, std::int64_t now_ms) {
  Entry* e = find(hash);
  if (e == nullptr) return;
  // Relaxed and unsynchronised between the two words: racing failures write nearly the same
  // stamps, and the run is a heuristic about when pacing starts, never about whether a retry goes.
  const budget::FailingRun seen{e->run_began.load(kRelaxed), e->run_last.load(kRelaxed)};
  const core::Millis gap = core::fleet_probe::run_gap(core::fleet_probe::unpack(e->probe.load(kRelaxed)), seen);
  const budget::FailingRun next = budget::note_failure(seen, e->success_sent.load(kRelaxed), now_ms, gap);
  if (next.began != seen.began) e->run_began.store(next.began, kRelaxed);
  if (next.last != seen.last) e->run_last.store(next.last, kRelaxed);
}

budget::FailingRun Store::run(std::uint64_t hash) const {
  const Entry* e = find(hash);
  if (e == nullptr) return {};
  return budget::FailingRun{e->run_began.load(kRelaxed), e->run_last.load(kRelaxed)};
}

bool Store::failing_outright(std::uint64_t hash, std::int64_t now_ms, core::Millis age) const {
  const Entry* e = find(hash);
  if (e == nullptr) return false;
  const budget::FailingRun run{e->run_began.load(kRelaxed), e->run_last.load(kRelaxed)};
  return core::fleet_probe::outage(run, e->success_sent.load(kRelaxed), now_ms, age);
}

std::optional<core::fleet_probe::Claim> Store::claim_probe(std::uint64_t hash, std::int64_t now_ms,
                                                           core::Millis own_backoff, std::int64_t born_ms,
                                                           core::Millis age) {
  namespace probe = core::fleet_probe;
  Entry* e = find(hash);
  if (e == nullptr) return std::nullopt;
  const budget::FailingRun run{e->run_began.load(kRelaxed), e->run_last.load(kRelaxed)};
  if (!probe::outage(run, e->success_sent.load(kRelaxed), now_ms, age)) return std::nullopt;
  // Read once, as take_retry's: a younger waiter that joins meanwhile gets the next probe.
  const std::uint32_t born = born_ms != 0 ? token_queue::stamp_of(born_ms) : 0;
  const bool yields = token_queue::yields(token_queue::unpack(e->queue.load(kRelaxed)), born, now_ms);
  std::uint64_t word = e->probe.load(kRelaxed);
  for (;;) {
    const probe::Claim c = probe::claim(probe::unpack(word), run, now_ms, own_backoff, yields);
    if (!c.go) {
      note_queue(*e, false, born, now_ms);
      return c;
    }
    // Lost to another retry: `word` is now its claim, and this one waits for it.
    if (e->probe.compare_exchange_weak(word, probe::pack(c.next), kRelaxed)) {
      note_queue(*e, true, born, now_ms);
      return c;
    }
  }
}

void Store::probe_failed(std::uint64_t hash, std::int64_t now_ms) {
  Entry* e = find(hash);
  if (e == nullptr) return;
  std::uint64_t word = e->probe.load(kRelaxed);
  while (!e->probe.compare_exchange_weak(
      word, core::fleet_probe::pack(core::fleet_probe::after_failure(core::fleet_probe::unpack(word), now_ms)),
      kRelaxed)) {
  }
}

void Store::defer_probe(std::uint64_t hash, std::int64_t now_ms, core::Millis wait) {
  Entry* e = find(hash);
  if (e == nullptr) return;
  std::uint64_t word = e->probe.load(kRelaxed);
  while (!e->probe.compare_exchange_weak(
      word, core::fleet_probe::pack(core::fleet_probe::defer(core::fleet_probe::unpack(word), now_ms, wait)),
      kRelaxed)) {
  }
}

core::fleet_probe::Probe Store::probe(std::uint64_t hash) const {
  const Entry* e = find(hash);
  return e == nullptr ? core::fleet_probe::Probe{} : core::fleet_probe::unpack(e->probe.load(kRelaxed));
}

std::uint32_t Store::success_sent(std::uint64_t hash) const {
  const Entry* e = find(hash);
  return e == nullptr ? 0 : e->success_sent.load(kRelaxed);
}

void Store::end_cooling(std::uint64_t hash, std::int64_t sent_ms) {
  if (Entry* e = find(hash); e != nullptr && e->cool_until_ms.load(kRelaxed) != 0) end_cooling(*e, sent_ms);
}

void Store::end_cooling(Entry& e, std::int64_t sent_ms) {
  // Only a request sent after the cooldown was raised is evidence: one already on the wire when
  // the server said "come back later" says nothing about later.
  std::int64_t until = e.cool_until_ms.load(std::memory_order_acquire);
  if (until == 0 || e.cool_set_ms.load(std::memory_order_acquire) > sent_ms) return;
  const auto now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  // An expired one is only tidied away (later successes skip it); one still running is ended.
  if (e.cool_until_ms.compare_exchange_strong(until, 0, kRelaxed) && until > now) {
    e.cool_ended_ms.store(now, kRelaxed);
    e.cool_ended_until_ms.store(until, kRelaxed);
    e.cool_end_pid.store(static_cast<std::uint32_t>(::getpid()), kRelaxed);
  }
}

void Store::note_cred_cooling(std::string_view host_key, std::int64_t now_ms) {
  if (Entry* e = find_or_claim(core::fleet_key::hash(host_key), host_key, now_ms)) {
    if (e->cred_cooling.load(kRelaxed) == 0) e->cred_cooling.store(1, kRelaxed);
  }
}

std::optional<bool> Store::take_retry(std::uint64_t hash, std::string_view key, const budget::Budget& b,
                                      std::int64_t now_ms, bool again, std::optional<core::Millis>* eta,
                                      std::int64_t born_ms) {
  Entry* e = find_or_claim(hash, key, now_ms);
  if (e == nullptr) return std::nullopt;
  const std::uint64_t requests = window_of(*e, now_ms, b.window).requests;
  // First the successes since the last decision (each is credited by exactly one decision),
  // then the bucket; a decision that dies between the two loses that credit: strict, never loose.
  const std::uint64_t earned = e->earned.load(kRelaxed);
  std::uint64_t mark_word = e->mark.load(kRelaxed);
  budget::Mark mark;
  std::uint64_t fresh = 0;
  do {
    mark = budget::unpack_mark(mark_word);
    fresh = budget::advance(mark, earned);
  } while (!e->mark.compare_exchange_weak(mark_word, budget::pack(mark), kRelaxed));
  const std::uint64_t kept = budget::kept_back(b, requests, mark.streak, again);
  // Read once: a younger waiter that joins meanwhile gets the next token, not this one.
  const std::uint32_t born = born_ms != 0 ? token_queue::stamp_of(born_ms) : 0;
  const bool yields = token_queue::yields(token_queue::unpack(e->queue.load(kRelaxed)), born, now_ms);
  std::uint64_t word = e->bucket.load(kRelaxed);
  bool allowed = false;
  bool there = false;
  budget::Bucket next;
  do {
    next = budget::refill(budget::unpack_bucket(word), b, now_ms, fresh, requests);
    budget::Bucket taken = next;
    there = budget::take(taken, kept);
    allowed = there && !yields;
    if (allowed) next = taken;
  } while (!e->bucket.compare_exchange_weak(word, budget::pack(next), kRelaxed));
  note_queue(*e, allowed, born, now_ms);
  if (allowed) count(hash, key, true, now_ms);
  if (!allowed && eta != nullptr) {
    // A bucket whose cap is below what a retry needs never gives one (a budget of zero); one
    // that is there but goes to a younger waiter: 0, look again at the next poll.
    *eta = there                                              ? core::Millis{0}
           : budget::cap(b, requests) < budget::kToken + kept ? core::Millis::max()
                                                              : budget::eta(next, b, kept);
  }
  return allowed;
}

void Store::note_queue(Entry& e, bool taken, std::uint32_t born, std::int64_t now_ms) {
  std::uint64_t queue = e.queue.load(kRelaxed);
  while (!e.queue.compare_exchange_weak(
      queue,
      token_queue::pack(taken ? token_queue::note_taken(token_queue::unpack(queue), born)
                              : token_queue::note_waiting(token_queue::unpack(queue), born, now_ms)),
      kRelaxed)) {
  }
}

void Store::refund(std::uint64_t hash) {
  Entry* e = find(hash);
  if (e == nullptr) return;
  std::uint64_t word = e->bucket.load(kRelaxed);
  while (
      !e->bucket.compare_exchange_weak(word, budget::pack(budget::give_back(budget::unpack_bucket(word))), kRelaxed)) {
  }
}

budget::Counts Store::window_of(const Entry& e, std::int64_t now_ms, core::Millis window) {
  std::array<std::uint64_t, budget::kSlots> ring;
  for (int i = 0; i < budget::kSlots; ++i) ring[i] = e.ring[i].load(kRelaxed);
  return budget::window_counts(ring, budget::epoch_of(now_ms), window);
}

std::optional<budget::Counts> Store::counts(std::string_view key, std::int64_t now_ms, core::Millis window) const {
  const Entry* e = find(core::fleet_key::hash(key));
  if (e == nullptr) return std::nullopt;
  return window_of(*e, now_ms, window);
}

bool Store::cool(std::string_view key, std::int64_t until_ms, int status, std::int64_t now_ms) {
  Entry* e = find_or_claim(core::fleet_key::hash(key), key, now_ms);
  if (e == nullptr) return false;
  std::int64_t current = e->cool_until_ms.load(kRelaxed);
  if (current >= until_ms) return true;
  // First when: a success sent before now must not end the cooldown raised here (end_cooling
  // reads the deadline, then this).
  e->cool_set_ms.store(now_ms, std::memory_order_release);
  while (current < until_ms) {
    if (e->cool_until_ms.compare_exchange_weak(current, until_ms, std::memory_order_release, kRelaxed)) {
      // Display only: who raised it last. A racing raise may pair its deadline with our pid.
      e->cool_status.store(static_cast<std::uint32_t>(status), kRelaxed);
      e->cool_pid.store(static_cast<std::uint32_t>(::getpid()), kRelaxed);
      break;
    }
  }
  return true;
}

Cooling Store::cooling(std::string_view key, std::int64_t now_ms) const {
  Cooling c;
  const Entry* e = find(core::fleet_key::hash(key));
  if (e == nullptr) return c;
  c.until_ms = e->cool_until_ms.load(std::memory_order_acquire);
  // Further off than any server may ask: a corrupt file, not a server's word.
  if (c.until_ms > now_ms + core::cooldown::kMaxCooldown.count()) c.until_ms = 0;
  c.set_ms = e->cool_set_ms.load(kRelaxed);
  c.status = static_cast<int>(e->cool_status.load(kRelaxed));
  c.pid = static_cast<int>(e->cool_pid.load(kRelaxed));
  c.ended_ms = e->cool_ended_ms.load(kRelaxed);
  c.ended_until_ms = e->cool_ended_until_ms.load(kRelaxed);
  c.ended_pid = static_cast<int>(e->cool_end_pid.load(kRelaxed));
  return c;
}

std::string Store::name_of(const Entry& e) {
  std::string out;
  for (std::size_t w = 0; w < layout::kNameWords; ++w) {
    const std::uint64_t word = e.name[w].load(kRelaxed);
    for (std::size_t b = 0; b < 8; ++b) {
      const char c = static_cast<char>((word >> (8 * b)) & 0xff);
      if (c == '\0') return out;
      // A name from a corrupt file must not smuggle control characters onto a terminal.
      out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    }
  }
  return out;
}

std::vector<KeyView> Store::list(std::int64_t now_ms, const budget::Budget& b) const {
  std::vector<KeyView> out;
  Entry* table = entries();
  for (std::uint32_t i = 0; i < layout::kEntries; ++i) {
    const Entry& e = table[i];
    if (e.hash.load(std::memory_order_acquire) == 0) continue;
    KeyView v;
    v.key = name_of(e);
    v.cooling = cooling(v.key, now_ms);
    v.counts = window_of(e, now_ms, b.window);
    // What the next decision would credit and find, without making it.
    budget::Mark mark = budget::unpack_mark(e.mark.load(kRelaxed));
    const std::uint64_t fresh = budget::advance(mark, e.earned.load(kRelaxed));
    const budget::Bucket bucket = budget::unpack_bucket(e.bucket.load(kRelaxed));
    v.tokens = budget::refill(bucket, b, now_ms, fresh, v.counts.requests).milli;
    out.push_back(std::move(v));
  }
  return out;
}

bool Store::clear(std::string_view key) {
  Entry* e = find(core::fleet_key::hash(key));
  if (e == nullptr) return false;
  reset_entry(*e);
  return true;
}

}  // namespace curlretry::fleet
