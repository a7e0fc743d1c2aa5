#include "core/fleet_verdict.h"

#include <algorithm>

#include "core/backoff.h"
#include "core/duration_text.h"
#include "core/fleet_probe.h"

namespace curlretry::core::fleet_verdict {
namespace {

bool fits_left(Millis wait, const Limits& limits) { return !limits.time_left || wait < *limits.time_left; }

}  // namespace

Limits limits_for(const Policy& policy, bool persistent, std::optional<Millis> time_left) {
  Limits limits{policy.max_retry_after, policy.backoff.max, persistent, time_left};
  const Millis schedule = backoff_schedule_bound(policy.backoff, policy.max_attempts);
  limits.max_probe_wait =
      schedule > Millis::max() - fleet_probe::kMaxGap ? Millis::max() : schedule + fleet_probe::kMaxGap;
  return limits;
}

Gate plan(Millis planned, Millis cooling, const Limits& limits) {
  if (cooling <= planned) return Gate{Kind::go, planned, std::nullopt};
  // Another request's answer delays this retry as the server's own wait would: for as long as it
  // lasts when that is within what this request's policy lets a server-announced wait last
  // (retry_after.max_ms); its success then ends the cooldown for everyone. A longer cooldown (a
  // wait this request's own policy would refuse, so it is not its to wait for) or one that cannot
  // fit the time left is not waited for: the retry goes at its own time, as it would without the
  // fleet (the fleet changes when, never whether).
  if (cooling > limits.max_server_wait) return Gate{Kind::go, planned, std::nullopt};
  const Millis wait = cooling;
  if (!fits_left(wait, limits)) return Gate{Kind::go, planned, std::nullopt};
  return Gate{Kind::wait_cooldown, wait, std::nullopt};
}

Gate at_send(Millis cooling, Bucket token, Waited waited, const Limits& limits) {
  if (cooling.count() > 0 && waited.cooldown + cooling <= limits.max_server_wait && fits_left(cooling, limits)) {
    return Gate{Kind::wait_cooldown, cooling, std::nullopt};
  }
  // A cooldown that no longer fits (raised over and over) was waited for as long as one server
  // wait may last: the retry goes on to its token.
  if (token.taken) return Gate{Kind::go, Millis{0}, std::nullopt};
  const std::optional<Millis> eta = token.eta;
  // A retry whose answer was cut cannot be given up without breaking that answer: it goes.
  const auto give_up = [&](std::optional<Millis> at) {
    return limits.answer_cut ? Gate{Kind::go, Millis{0}, at, false, true} : Gate{Kind::give_up_budget, Millis{0}, at};
  };
  if (eta == Millis::max()) return give_up(std::nullopt);  // a budget of zero
  if (!limits.persistent && waited.token >= limits.max_token_wait) return give_up(eta);
  // The request's own deadline comes first, in every mode: a token it could only get after its
  // timeout would only turn the retry into a timeout.
  if (limits.time_left && (limits.time_left->count() <= 0 || (eta && *eta >= *limits.time_left))) {
    return give_up(eta);
  }
  // An eta of 0 is a token that is there for a younger waiter (core/token_queue.h), which takes it
  // at its next look: this retry looks again a poll later, not every millisecond until then.
  Millis wait = eta && eta->count() > 0 ? std::clamp(*eta, Millis{1}, kTokenPoll) : kTokenPoll;
  if (!limits.persistent) wait = std::min(wait, std::max(Millis{1}, limits.max_token_wait - waited.token));
  if (limits.time_left) wait = std::min(wait, *limits.time_left);
  return Gate{Kind::wait_token, wait, eta};
}

Gate at_probe(Millis cooling, std::optional<Millis> probe_in, Waited waited, const Limits& limits) {
  Limits own = limits;
  own.max_token_wait = limits.max_probe_wait;
  Waited for_probe = waited;
  for_probe.token = waited.probe;  // the probe's own allowance (Waited)
  Gate g = at_send(cooling, Bucket{!probe_in.has_value(), probe_in}, for_probe, own);
  // A cooldown is waited for first, as at_send; otherwise the probe's answer is a token's.
  if (g.kind != Kind::wait_cooldown) g.probe = true;
  return g;
}

bool probe_stands(const Gate& gate, budget::FailingRun run, std::int64_t now_ms) {
  if (gate.kind != Kind::give_up_budget) return true;
  // Serial-number arithmetic on Unix ms mod 2^32, as the store's stamps.
  const auto age = static_cast<std::int32_t>(static_cast<std::uint32_t>(now_ms) - run.began);
  return run.began == 0 || age >= budget::kOutageAge.count();
}

std::string describe(const Gate& gate) {
  switch (gate.kind) {
    case Kind::go:
      if (gate.over_budget) return "go now without a fleet token (its answer was cut short: a give-up would break it)";
      return gate.probe ? "go now as the fleet's probe" : "go now";
    case Kind::wait_cooldown: return "would wait " + human_duration(gate.wait) + " for the fleet's cooldown";
    case Kind::wait_token:
      return "would wait " + human_duration(gate.eta ? *gate.eta : gate.wait) +
             (gate.probe ? " for the fleet's probe" : " for a fleet token");
    case Kind::give_up_cooldown:
      return "would give up (cooldown): the fleet's cooldown of " + human_duration(gate.wait) +
             " does not fit the request's limits";
    case Kind::give_up_budget:
      return gate.probe ? "would give up (budget): the fleet's next probe does not fit the request's limits"
                        : "would give up (budget): no fleet token within the request's limits";
  }
  return {};
}

}  // namespace curlretry::core::fleet_verdict
