#include "core/fleet_probe.h"

#include <algorithm>

#include "core/fleet_verdict.h"

namespace curlretry::core::fleet_probe {
namespace {

// Serial-number arithmetic on Unix ms mod 2^32 (a wait lasts minutes, far below the half range).
std::int32_t ahead(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b); }

std::uint32_t stamp(std::int64_t ms) { return static_cast<std::uint32_t>(static_cast<std::uint64_t>(ms)) | 1u; }

}  // namespace

std::uint64_t pack(Probe probe) { return (static_cast<std::uint64_t>(probe.next_at) << 32) | probe.gap; }

Probe unpack(std::uint64_t word) { return Probe{static_cast<std::uint32_t>(word >> 32), static_cast<std::uint32_t>(word)}; }

bool outage(budget::FailingRun run, std::uint32_t success_sent, std::int64_t now_ms, Millis age) {
  if (run.began == 0 || run.last == 0) return false;
  if (success_sent != 0 && ahead(success_sent, run.began) >= 0) return false;
  return ahead(stamp(now_ms), run.began) >= age.count();
}

Claim claim(Probe probe, budget::FailingRun run, std::int64_t now_ms, Millis own_backoff, bool yields) {
  const std::uint32_t now = stamp(now_ms);
  if (probe.next_at != 0) {
    const std::int32_t due_in = ahead(probe.next_at, now);
    if (due_in > 0 && due_in <= kMaxGap.count()) return Claim{false, Millis{due_in}, probe};
  }
  if (yields) return Claim{false, fleet_verdict::kTokenPoll, probe};
  // The series goes on when the last claim (or the last failure's push) was made in this run.
  const bool same_run = probe.next_at != 0 && probe.gap != 0 && run.began != 0 &&
                        ahead(probe.next_at - probe.gap, run.began) >= 0;
  const Millis::rep previous = same_run ? static_cast<Millis::rep>(probe.gap) : 0;
  const Millis::rep gap = std::clamp<Millis::rep>(std::max<Millis::rep>(own_backoff.count(), 2 * previous),
                                                  kMinGap.count(), kMaxGap.count());
  return Claim{true, Millis{0}, Probe{(now + static_cast<std::uint32_t>(gap)) | 1u, static_cast<std::uint32_t>(gap)}};
}

Probe after_failure(Probe probe, std::int64_t now_ms) {
  const std::uint32_t gap = probe.gap != 0 ? probe.gap : static_cast<std::uint32_t>(kMinGap.count());
  const std::uint32_t pushed = (stamp(now_ms) + gap) | 1u;
  if (probe.next_at == 0 || ahead(pushed, probe.next_at) > 0) probe.next_at = pushed;
  probe.gap = gap;
  return probe;
}

Probe defer(Probe probe, std::int64_t now_ms, Millis wait) {
  const Millis::rep w = std::clamp<Millis::rep>(wait.count(), 1, kMaxGap.count());
  probe.next_at = (stamp(now_ms) + static_cast<std::uint32_t>(w)) | 1u;
  return probe;
}

Millis run_gap(Probe probe, budget::FailingRun run) {
  if (probe.gap == 0 || run.began == 0 || ahead(probe.next_at - probe.gap, run.began) < 0) return budget::kRunGap;
  return budget::kRunGap + Millis{probe.gap};
}

}  // namespace curlretry::core::fleet_probe
