// Body markers, JSON error codes and the whole verdict (core::decide) on attacker-shaped
// responses: the status, Retry-After / retry-after-ms / x-should-retry values and the body are
// the server's, the rest of the outcome and the policy's tables come from the input too.
// Invariants: a verdict always has a reason; a retry never waits a negative time, nor longer than
// the policy allows; a committed, host-aborted or successful attempt is never retried; a log
// phrase never carries body text beyond a marker or code the policy itself spells.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "core/body_scan.h"
#include "core/decide.h"
#include "core/policy.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry::core;

namespace {

class InputRandom final : public Random {
 public:
  explicit InputRandom(FuzzedDataProvider& in) : in_(in) {}
  double uniform() override {
    // [0, 1): from the input while it lasts, then a fixed point.
    return in_.remaining_bytes() > 0 ? in_.ConsumeIntegralInRange<std::uint32_t>(0, 0xffffffe) / 268435455.0 : 0.5;
  }

 private:
  FuzzedDataProvider& in_;
};

std::optional<std::string> maybe_text(FuzzedDataProvider& in, std::size_t max) {
  if (!in.ConsumeBool()) return std::nullopt;
  return in.ConsumeRandomLengthString(max);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);

  Policy policy = Policy::builtin();
  policy.max_attempts = in.ConsumeBool() ? -1 : in.ConsumeIntegralInRange<int>(1, 1000000);
  policy.backoff.strategy = static_cast<Strategy>(in.ConsumeIntegralInRange<int>(0, 2));
  policy.backoff.jitter = static_cast<Jitter>(in.ConsumeIntegralInRange<int>(0, 3));
  constexpr std::int64_t kMaxMs = 2'592'000'000;  // the config's bound on any ms value
  policy.backoff.base = Millis{in.ConsumeIntegralInRange<std::int64_t>(0, kMaxMs)};
  policy.backoff.max = Millis{in.ConsumeIntegralInRange<std::int64_t>(0, kMaxMs)};
  policy.max_elapsed = Millis{in.ConsumeIntegralInRange<std::int64_t>(0, kMaxMs)};
  policy.max_retry_after = Millis{in.ConsumeIntegralInRange<std::int64_t>(0, kMaxMs)};
  policy.honor_retry_after = in.ConsumeBool();
  policy.body_window = in.ConsumeIntegralInRange<std::size_t>(0, 1 << 20);
  if (in.ConsumeBool()) {
    CodeTable table;
    table.path = in.ConsumeRandomLengthString(32);
    table.retry = {in.ConsumeRandomLengthString(16), "1302"};
    table.permanent = {in.ConsumeRandomLengthString(16), "1113"};
    policy.codes.push_back(table);
  }
  policy.codes.push_back(CodeTable{"error.code", {"1302", "1305"}, {"1113", "1308"}});
  if (in.ConsumeBool()) {
    std::string marker = in.ConsumeRandomLengthString(16);
    if (!marker.empty()) policy.retry_markers.push_back(marker);  // the config refuses ""
  }

  Outcome o;
  o.transport = static_cast<Transport>(in.ConsumeIntegralInRange<int>(0, static_cast<int>(Transport::other)));
  o.status = in.ConsumeIntegralInRange<int>(0, 999);
  o.hints.retry_after = maybe_text(in, 64);
  o.hints.retry_after_ms = maybe_text(in, 32);
  o.hints.should_retry = maybe_text(in, 16);
  o.committed = in.ConsumeBool();
  o.replayable = in.ConsumeBool();
  o.attempt = in.ConsumeIntegralInRange<int>(1, 1000001);
  o.elapsed = Millis{in.ConsumeIntegralInRange<std::int64_t>(0, kMaxMs * 2)};
  if (in.ConsumeBool()) o.remaining = Millis{in.ConsumeIntegralInRange<std::int64_t>(-kMaxMs, kMaxMs)};
  o.previous_delay = Millis{in.ConsumeIntegralInRange<std::int64_t>(0, kMaxMs)};
  const auto now = std::chrono::system_clock::time_point{
      std::chrono::seconds(in.ConsumeIntegralInRange<std::int64_t>(0, 4'102'444'800))};
  InputRandom random(in);
  o.body_prefix = in.ConsumeRemainingBytesAsString();

  // The scanners alone, on the whole body.
  if (const auto m = find_marker(o.body_prefix, policy.retry_markers)) FUZZ_CHECK(!m->empty());
  (void)find_marker(o.body_prefix, policy.permanent_markers);
  (void)json_scalar_at(o.body_prefix, "error.code");
  (void)json_scalar_at(o.body_prefix, "code");
  for (const CodeTable& t : policy.codes) (void)json_scalar_at(o.body_prefix, t.path);

  const Verdict v = decide(policy, o, random, now);
  FUZZ_CHECK(parse_reason(reason_text(v)).has_value());
  FUZZ_CHECK(!v.what.empty());
  FUZZ_CHECK(v.what.size() <= 200 + 2 * 32);  // facts plus at most a policy-spelled marker/code
  if (v.action == Action::retry) {
    FUZZ_CHECK(!o.committed && o.replayable);
    FUZZ_CHECK(o.transport != Transport::host_abort && o.transport != Transport::bad_argument);
    FUZZ_CHECK(policy.max_attempts == -1 || o.attempt < policy.max_attempts);
    FUZZ_CHECK(v.delay.count() >= 0);
    // The strategy is capped by backoff.max; a server's wait by max_retry_after.
    FUZZ_CHECK(v.delay <= std::max(policy.backoff.max, policy.max_retry_after));
    FUZZ_CHECK(o.elapsed + v.delay <= policy.max_elapsed);
    if (o.remaining) FUZZ_CHECK(v.delay < *o.remaining);
  } else {
    FUZZ_CHECK(v.delay.count() == 0);
  }
  return 0;
}
