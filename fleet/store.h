// The machine-wide fleet store: shared cooldowns and retry budgets (a token bucket and request
// counts, core/retry_tokens.h) per key, in one mapped
// table every process of the user updates with atomics. After open(), nothing here makes a
// system call or allocates on the counting and lookup paths (listing for the CLI allocates).
// Thread-safe and fork-safe (the mapping is shared and inherited).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fleet_probe.h"
#include "core/retry_budget.h"
#include "core/retry_tokens.h"
#include "fleet/table_file.h"

namespace curlretry::fleet {

struct Cooling {
  std::int64_t until_ms = 0;  // Unix ms; 0 = not cooling
  std::int64_t set_ms = 0;
  int status = 0;
  int pid = 0;
  // The last cooldown a success ended (display only): when, the deadline it had, by which process.
  std::int64_t ended_ms = 0;
  std::int64_t ended_until_ms = 0;
  int ended_pid = 0;
};

struct KeyView {
  std::string key;
  Cooling cooling;
  core::budget::Counts counts;  // in the window asked for
  std::uint64_t tokens = 0;     // what a retry decision now would find, in core::budget::kToken units
};

class Store {
 public:
  // Opens the table in `dir` (created 0700 if missing). nullptr with `error` set when the
  // directory is refused or the table cannot be made; `notes` gets what was repaired.
  static std::unique_ptr<Store> open(const std::string& dir, std::string& error, std::vector<std::string>& notes);
  // The CLI's view: never creates or repairs anything.
  static std::unique_ptr<Store> open_existing(const std::string& dir, std::string& error);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return mapping_.path; }

  // Counts one request (first attempt) or one retry against `key`. False: the table is full.
  bool count(std::string_view key, bool retry, std::int64_t now_ms);
  // The same with the key's hash (core::fleet_key::hash) already known.
  bool count(std::uint64_t hash, std::string_view key, bool retry, std::int64_t now_ms);
  // count() and earn() with a hint: where the key's entry was found last (count() fills it). A
  // caller that counts and credits the same key on every request keeps one and skips the table's
  // probe (issue 27). Checked on each use (in this table, still holding the key's hash): a stale
  // one (nullptr, another store's, its entry taken over by another key) is looked up again.
  // Inline: with a good hint, the success path's whole store work is these two, no call.
  bool count(std::uint64_t hash, std::string_view key, bool retry, std::int64_t now_ms, layout::Entry*& hint) {
    layout::Entry* e = hinted(hash, hint);
    if (e == nullptr && (e = find_or_claim(hash, key, now_ms)) == nullptr) return false;
    hint = e;
    count_in(*e, retry, now_ms);
    return true;
  }
  bool earn(std::uint64_t hash, std::int64_t sent_ms, layout::Entry* hint) {
    layout::Entry* e = hinted(hash, hint);
    if (e == nullptr && (e = find(hash)) == nullptr) return false;
    return earn_in(*e, sent_ms);
  }
  // A transfer to the key succeeded: it earns the key's bucket percent/100 of a token at the next
  // decision, and when it was sent (`sent_ms`, Unix ms) after the key's cooldown was set, the
  // cooldown ends: the server coped again. One atomic add and one load while nothing cools.
  // True when a credential key of this host was ever cooled (the caller then ends that one too).
  bool earn(std::uint64_t hash, std::int64_t sent_ms);
  // Whether a success to the key was sent within core::budget::kHealthyWithin of `now_ms`: the
  // key is not failing outright, and its retries go without a token (core/retry_tokens.h).
  bool healthy(std::uint64_t hash, std::int64_t now_ms) const;
  // A request to the key failed, answered at `now_ms`: the key's failing run (core::budget::FailingRun)
  // begins or goes on. Two loads and up to two relaxed stores; nothing when the key is unknown.
  void note_failure(std::uint64_t hash, std::int64_t now_ms);
  // The key's failing run as it stands; a zero FailingRun when the key is unknown.
  core::budget::FailingRun run(std::uint64_t hash) const;
  // Whether the key fails outright (core::fleet_probe::outage over its run and success stamp), for
  // a retry whose run must be `age` old (core::fleet_probe::outage_age).
  bool failing_outright(std::uint64_t hash, std::int64_t now_ms, core::Millis age) const;
  // A retry at the end of its wait, after `own_backoff`: nullopt when the key does not fail
  // outright (core::fleet_probe::outage) or is unknown; else the fleet's probe word decided
  // (core::fleet_probe::claim), and on `go` this retry holds the probe (stored by CAS: of
  // retries racing for it, one wins, the rest wait). A few loads, one CAS when due. `born_ms` as
  // take_retry's: the due probe goes to the youngest request waiting for it (the token queue).
  // `age`: how old the run must be for this retry (core::fleet_probe::outage_age).
  std::optional<core::fleet_probe::Claim> claim_probe(std::uint64_t hash, std::int64_t now_ms,
                                                      core::Millis own_backoff, std::int64_t born_ms = 0,
                                                      core::Millis age = core::budget::kOutageAge);
  // The probe failed, answered at `now_ms`: the next one goes no sooner than a spacing later.
  void probe_failed(std::uint64_t hash, std::int64_t now_ms);
  // This machine's claim gave way to the fleet's probe (Redis): the next claim in `wait`.
  void defer_probe(std::uint64_t hash, std::int64_t now_ms, core::Millis wait);
  // The key's probe word (display); a zero Probe when the key is unknown.
  core::fleet_probe::Probe probe(std::uint64_t hash) const;
  // When the key's latest success was sent (Unix ms mod 2^32, low bit set; 0: none, or the key is
  // unknown): the evidence that wakes retries parked in an outage (core/fleet_wake.h). One load.
  std::uint32_t success_sent(std::uint64_t hash) const;
  // Ends the key's cooldown when it was set before `sent_ms` (a success on a credential key).
  void end_cooling(std::uint64_t hash, std::int64_t sent_ms);
  // Decides one retry against the key's bucket (credit, trickle, cap; core/retry_tokens.h), takes
  // its token when allowed and then counts it as a retry. nullopt: the table is full.
  // `again`: the retry follows a retry that failed (core::budget::kept_back). Refused, `eta` (when
  // given) gets how long the trickle needs to bring the token (core::budget::eta), Millis::max()
  // when the bucket can never hold one (its cap is below a token: a budget of zero).
  // `born_ms` (0: unknown, the oldest): when the retry's request sent its first attempt; a token
  // that is there goes to the youngest request waiting for one (core/token_queue.h), so an older
  // retry is refused with an `eta` of 0 while a younger one waits.
  std::optional<bool> take_retry(std::uint64_t hash, std::string_view key, const core::budget::Budget& budget,
                                 std::int64_t now_ms, bool again = false, std::optional<core::Millis>* eta = nullptr,
                                 std::int64_t born_ms = 0);
  // Gives back the token of a retry that succeeded: one CAS; nothing when the key is unknown.
  void refund(std::uint64_t hash);
  // The key's counts over `window` ending now; nullopt when the key is unknown.
  std::optional<core::budget::Counts> counts(std::string_view key, std::int64_t now_ms, core::Millis window) const;

  // Raises the key's cooldown to `until_ms` unless it is already later (a deadline some server
  // response stated; a success sent after it was raised ends it, earn()). False: table full.
  bool cool(std::string_view key, std::int64_t until_ms, int status, std::int64_t now_ms);
  // A credential key under the host `host_key` was cooled: its host's successes look it up.
  void note_cred_cooling(std::string_view host_key, std::int64_t now_ms);
  // The key's cooldown; until_ms 0 when none (or when it is implausibly far off: a corrupt file).
  Cooling cooling(std::string_view key, std::int64_t now_ms) const;

  // Every key in use, for `curlretry fleet`.
  std::vector<KeyView> list(std::int64_t now_ms, const core::budget::Budget& budget) const;
  // Ends the key's cooldown and forgets its counts. False when the key is unknown.
  bool clear(std::string_view key);

 private:
  explicit Store(Mapping mapping) : mapping_(std::move(mapping)) {}
  layout::Entry* find(std::uint64_t hash) const;
  // The hint's entry when it still holds `hash` in this table, else nullptr.
  layout::Entry* hinted(std::uint64_t hash, layout::Entry* e) const {
    // As addresses: a pointer into another mapping is no pointer into this table's array.
    const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(e) - reinterpret_cast<std::uintptr_t>(entries());
    if (offset >= sizeof(layout::Entry) * layout::kEntries) return nullptr;
    return e->hash.load(std::memory_order_acquire) == hash ? e : nullptr;
  }
  static void count_in(layout::Entry& e, bool retry, std::int64_t now_ms) {
    constexpr auto relaxed = std::memory_order_relaxed;
    const std::uint32_t epoch = core::budget::epoch_of(now_ms);
    auto& slot = e.ring[core::budget::ring_index(epoch)];
    std::uint64_t word = slot.load(relaxed);
    while (!slot.compare_exchange_weak(word, core::budget::bump(word, epoch, retry), relaxed)) {
    }
    if (e.last_epoch.load(relaxed) != epoch) e.last_epoch.store(epoch, relaxed);
  }
  bool earn_in(layout::Entry& e, std::int64_t sent_ms) {
    constexpr auto relaxed = std::memory_order_relaxed;
    e.earned.fetch_add(1, relaxed);
    // 0 means never: a stamp that is 0 mod 2^32 becomes 1 (a millisecond off, harmless). Only a
    // later send moves it: a slow success (sent long ago) must not make the key look idle.
    const std::uint32_t stamp = static_cast<std::uint32_t>(sent_ms) | 1u;
    const std::uint32_t seen = e.success_sent.load(relaxed);
    if (seen == 0 || static_cast<std::int32_t>(stamp - seen) > 0) e.success_sent.store(stamp, relaxed);
    if (e.cool_until_ms.load(relaxed) != 0) end_cooling(e, sent_ms);
    return e.cred_cooling.load(relaxed) != 0;
  }
  layout::Entry* find_or_claim(std::uint64_t hash, std::string_view key, std::int64_t now_ms);
  static std::string name_of(const layout::Entry& entry);
  void end_cooling(layout::Entry& entry, std::int64_t sent_ms);
  // The entry's token queue after a retry of the request born at `born` (token_queue::stamp_of)
  // took a token or the probe (`taken`), or waits for one.
  static void note_queue(layout::Entry& entry, bool taken, std::uint32_t born, std::int64_t now_ms);
  static core::budget::Counts window_of(const layout::Entry& entry, std::int64_t now_ms, core::Millis window);
  layout::Entry* entries() const {
    return reinterpret_cast<layout::Entry*>(static_cast<char*>(mapping_.base) + sizeof(layout::Header));
  }

  Mapping mapping_;
};

}  // namespace curlretry::fleet
