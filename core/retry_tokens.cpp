#include "core/retry_tokens.h"

#include <algorithm>
#include <limits>

namespace curlretry::core::budget {
namespace {

constexpr std::uint64_t kMarkMask = (std::uint64_t{1} << 48) - 1;
constexpr std::uint64_t kMaxMilli = std::numeric_limits<std::uint32_t>::max();

std::uint64_t non_negative(int v) { return static_cast<std::uint64_t>(std::max(v, 0)); }

}  // namespace

std::uint64_t pack(Bucket bucket) { return (static_cast<std::uint64_t>(bucket.milli) << 32) | bucket.stamp; }

Bucket unpack_bucket(std::uint64_t word) {
  return Bucket{static_cast<std::uint32_t>(word >> 32), static_cast<std::uint32_t>(word)};
}

std::uint64_t cap(const Budget& budget, std::uint64_t window_requests) {
  const std::uint64_t by_percent = window_requests * non_negative(budget.percent) * (kToken / 100);
  return std::min(std::max(by_percent, non_negative(budget.reserve) * kToken), kMaxMilli);
}

Bucket refill(Bucket bucket, const Budget& budget, std::int64_t now_ms, std::uint64_t successes,
              std::uint64_t window_requests) {
  const std::uint64_t most = cap(budget, window_requests);
  // Never 0 once filled: 0 is "never".
  const auto now = static_cast<std::uint32_t>(static_cast<std::uint64_t>(now_ms)) | 1u;
  if (bucket.stamp == 0) return Bucket{static_cast<std::uint32_t>(most), now};
  std::uint64_t milli = bucket.milli;
  const auto elapsed = static_cast<std::int32_t>(now - bucket.stamp);
  const auto window = static_cast<std::uint64_t>(std::max<Millis::rep>(budget.window.count(), 1));
  const std::uint64_t reserve = non_negative(budget.reserve);
  if (elapsed <= 0 || reserve == 0) {
    bucket.stamp = now;
  } else {
    const std::uint64_t ms = std::min(static_cast<std::uint64_t>(elapsed), window);
    const std::uint64_t trickle = reserve * kToken * ms / window;
    // Only the time that earned whole thousandths moves the stamp: the rest (decisions a few ms
    // apart earn nothing each) stays for the next decision. A full window or more fills it all.
    const std::uint64_t used = (trickle * window + reserve * kToken - 1) / (reserve * kToken);
    bucket.stamp = ms >= window ? now : bucket.stamp + static_cast<std::uint32_t>(std::min(used, ms));
    if (bucket.stamp == 0) bucket.stamp = 1;
    milli += trickle;
  }
  const std::uint64_t earned = std::min(successes, kMaxMilli) * non_negative(budget.percent) * (kToken / 100);
  milli = std::min(milli + earned, most);
  bucket.milli = static_cast<std::uint32_t>(milli);
  return bucket;
}

std::uint64_t kept_back(const Budget& budget, std::uint64_t window_requests, std::uint32_t streak, bool again) {
  if (streak < kFailingStreak && !again) return 0;
  const std::uint64_t reserve = non_negative(budget.reserve) * kToken;
  const std::uint64_t most = cap(budget, window_requests);
  return most > reserve ? std::min(reserve, most - reserve) : 0;
}

bool take(Bucket& bucket, std::uint64_t kept) {
  if (bucket.milli < kToken + kept) return false;
  bucket.milli -= static_cast<std::uint32_t>(kToken);
  return true;
}

Bucket give_back(Bucket bucket) {
  bucket.milli = static_cast<std::uint32_t>(std::min<std::uint64_t>(bucket.milli + kToken, kMaxMilli));
  return bucket;
}

std::optional<Millis> eta(Bucket bucket, const Budget& budget, std::uint64_t kept) {
  const std::uint64_t need = kToken + kept;
  if (bucket.milli >= need) return Millis{0};
  const std::uint64_t reserve = non_negative(budget.reserve);
  if (reserve == 0) return std::nullopt;
  const auto window = static_cast<std::uint64_t>(std::max<Millis::rep>(budget.window.count(), 1));
  const std::uint64_t missing = need - bucket.milli;
  // refill() earns reserve*kToken*ms/window thousandths: the smallest ms that earns `missing`.
  const std::uint64_t ms = (missing * window + reserve * kToken - 1) / (reserve * kToken);
  return Millis{static_cast<Millis::rep>(std::min(ms, window))};
}

std::uint64_t pack(Mark mark) {
  return (static_cast<std::uint64_t>(mark.streak & 0xffff) << 48) | (mark.credited & kMarkMask);
}

Mark unpack_mark(std::uint64_t word) { return Mark{word & kMarkMask, static_cast<std::uint32_t>(word >> 48)}; }

bool healthy(std::uint32_t sent_stamp, std::int64_t now_ms) {
  if (sent_stamp == 0) return false;
  const auto age = static_cast<std::int32_t>(static_cast<std::uint32_t>(now_ms) - sent_stamp);
  return age < kHealthyWithin.count();
}

FailingRun note_failure(FailingRun run, std::uint32_t success_sent, std::int64_t now_ms, Millis gap) {
  // 0 means never: a stamp that is 0 mod 2^32 becomes 1 (a millisecond off, harmless).
  const std::uint32_t now = static_cast<std::uint32_t>(now_ms) | 1u;
  const bool succeeded_since = success_sent != 0 && static_cast<std::int32_t>(success_sent - run.began) >= 0;
  const bool quiet = static_cast<std::int32_t>(now - run.last) > gap.count();
  if (run.began == 0 || run.last == 0 || succeeded_since || quiet) run.began = now;
  // A failure answered out of order (an older clock reading) does not move the latest back.
  if (run.last == 0 || static_cast<std::int32_t>(now - run.last) > 0) run.last = now;
  return run;
}

bool met_outage(FailingRun run, std::int64_t born_ms) {
  if (run.began == 0) return false;
  const auto into = static_cast<std::int32_t>(static_cast<std::uint32_t>(born_ms) - run.began);
  return into >= kOutageAge.count();
}

std::uint64_t advance(Mark& mark, std::uint64_t earned) {
  const std::uint64_t fresh = (earned - mark.credited) & kMarkMask;
  // More than half the counter's range ahead: a count read before another decision moved the
  // mark past it, i.e. nothing new.
  if (fresh == 0 || fresh > (kMarkMask >> 1)) {
    if (mark.streak < 0xffff) ++mark.streak;
    return 0;
  }
  mark.credited = earned & kMarkMask;
  mark.streak = 0;
  return fresh;
}

}  // namespace curlretry::core::budget
