// The fleet's part of a retry verdict, after core::decide said "retry after D": the fleet may
// delay a retry (a shared cooldown, a wait for a budget token), never deny one its own policy
// would have made, except when the wait cannot fit the request's own limits. Two steps, both
// pure (the shim passes the clock's readings and the store's answers in):
//   plan()    when the verdict is made: how long the retry waits before it looks again;
//   at_send() when that wait is over: go now (the token is in hand), wait on, or give up.
// The token is taken at send, not at the verdict: a retry holds it only while it is on the wire,
// so retries that succeed (and give it back) never starve each other; an outage still drains the
// bucket one failed retry at a time.
#pragma once

#include <optional>
#include <string>

#include "core/outcome.h"
#include "core/policy.h"
#include "core/retry_tokens.h"

namespace curlretry::core::fleet_verdict {

// A waiting retry looks at the bucket again at least this often: a token given back by a retry
// that succeeded is found within this time, whoever (of the waiting retries) looks first.
inline constexpr Millis kTokenPoll{100};

// The request's own limits, as its policy and its host set them.
struct Limits {
  Millis max_server_wait{0};        // retry_after.max_ms: the most a cooldown may hold it
  Millis max_token_wait{0};         // the most it waits for a token (the shim: its own backoff, 1 s..backoff.max_ms)
  bool persistent = false;          // unattended mode: never give up for the budget
  std::optional<Millis> time_left;  // before the host's CURLOPT_TIMEOUT or max_elapsed_ms
  // The most it waits for the fleet's probe, in all: as long as its own schedule could still have
  // met a recovery (core::backoff_schedule_bound), plus the longest spacing between probes, the
  // time the probe may take to see it. A wait shorter than that (one backoff, as for a token)
  // gave requests up that their own retries would have saved.
  Millis max_probe_wait{0};
  // The attempt's answer was cut short by curlretry's own stop (at an event stream's error event,
  // or once an error body outgrew its hold): it can no longer reach the program whole. A give-up
  // would hand it a write error and part of a body, which neither the program alone nor a retry
  // would have got; so where the budget gives a retry up, this one goes without a token instead.
  // Its wait for one is as long as any retry's: only the give-up at its end is not made.
  bool answer_cut = false;
};

// The limits of a request under `policy` (the shim and explain alike).
Limits limits_for(const Policy& policy, bool persistent, std::optional<Millis> time_left);

enum class Kind : unsigned char {
  go,                // send the retry now (at_send: its token is taken)
  wait_cooldown,     // the key cools down: look again after `wait`
  wait_token,        // no token (or, Gate::probe, no leave from the fleet's probe): look again after
                     // `wait`, a token (the next probe) is due in about `eta`
  give_up_cooldown,  // the cooldown outlasts the request's limits (no longer decided: kept for explain's JSON)
  give_up_budget,    // no token came within backoff.max_ms, or none can before the deadline
};

struct Gate {
  Kind kind = Kind::go;
  Millis wait{0};             // before the next look (plan: the whole delay)
  std::optional<Millis> eta;  // wait_token / give_up_budget: when the trickle brings a token
  // The key fails outright (core/fleet_probe.h): the retry waits for, or goes as, the fleet's
  // probe, not for a token. A wait for the probe is a wait_token to the callers (they park or
  // sleep alike; its time counts towards the same allowance), told apart in logs and explain.
  bool probe = false;
  // go without a token (or without the probe's claim): Limits::answer_cut where the budget would
  // have given the retry up. Nothing is charged for it, so nothing is given back.
  bool over_budget = false;
};

// At the verdict: the policy's `planned` delay stretched to the key's cooldown (`cooling` left),
// at most to retry_after.max_ms; when that wait does not fit the time left, the planned delay
// alone (go): another request's answer never costs this one a retry its policy would make.
Gate plan(Millis planned, Millis cooling, const Limits& limits);

// What a retry has waited for the fleet since its planned delay ended. A wait for a token and a
// wait for the probe have their own allowances and count apart: a key that turns from "short of
// tokens" to "fails outright" while a retry waits does not hand it a probe allowance its token
// wait already used up (the default token allowance, backoff.max_ms = 60 s, is longer than the
// default probe allowance, ~12.5 s), so it gave the retry up at once (a Redis fleet whose server
// timed out, in the 10 %-failure window).
struct Waited {
  Millis cooldown{0};
  Millis token{0};
  Millis probe{0};
};

// At the end of a wait. A retry whose answer was cut (Limits::answer_cut) goes over budget where
// the others give up. `cooling`: the key's cooldown left now (another process may have raised
// it meanwhile). `token`: nullopt when the retry's token was taken; else the bucket's eta
// (core::budget::eta: 0 = one is there for a younger waiter, look again a poll later; nullopt
// inside = none trickles;
// Millis::max() = none can ever come, a budget of zero: give up at once).
// A cooldown raised again and again is waited for at most retry_after.max_ms in all, then the
// retry goes on to the token (as one server wait may last no longer).
struct Bucket {
  bool taken = false;
  std::optional<Millis> eta;  // when !taken
};
Gate at_send(Millis cooling, Bucket token, Waited waited, const Limits& limits);

// The same at the end of a wait on a key that fails outright: `probe_in` nullopt when this
// retry claimed the probe (go, no token), else how long until the next probe may go. It waits
// as for a token (looking again every kTokenPoll, so that a recovery found by the probe releases
// it at once), for at most max_probe_wait in all (`waited.probe`; never gives up in persistent
// mode), and gives up (budget) when the next probe cannot come before its deadline.
Gate at_probe(Millis cooling, std::optional<Millis> probe_in, Waited waited, const Limits& limits);

// Whether at_probe()'s gate stands (else the token decides, as on a key not failing outright):
// it does, unless it gives the retry up in a run that began less than core::budget::kOutageAge
// before `now_ms`. An unattended retry is probed from core::fleet_probe::kUnattendedAge on, to
// spare the bank; one whose own deadline cannot wait for that probe draws the bank, as every
// retry of so young a run does: the earlier probe may delay a retry, never deny one the bank
// would have sent.
bool probe_stands(const Gate& gate, budget::FailingRun run, std::int64_t now_ms);

// A retry the fleet's cooldown held this much longer than its own wait, in all, is part of the
// backlog an overload built (the server kept telling the fleet to come back later): when the
// cooldown ends (a success, or its deadline) the backlog is released at the budget's pace, a
// token a retry, never as one burst (fleet_hook::KeyCache::paced). Longer than a burst's
// concurrent requests stretch each other's waits by (milliseconds), shorter than an outage.
inline constexpr Millis kBacklogHold{1000};
inline bool joins_backlog(Millis held_beyond_own) { return held_beyond_own > kBacklogHold; }

// "go now", "would wait 3.2 s for the fleet's cooldown", "would wait 0.8 s for a fleet token",
// "would wait 7.5 s for the fleet's probe", "would give up (budget): no fleet token within the
// request's limits": for logs and `curlretry explain`.
std::string describe(const Gate& gate);

}  // namespace curlretry::core::fleet_verdict
