// How long a retry waits, and the limits that turn a retry into a give-up once the wait is known.
#include <gtest/gtest.h>

#include <climits>

#include "decide_test_support.h"

namespace curlretry::core {
namespace {

using namespace std::chrono_literals;
using testing::decide_at;
using testing::kBuiltin;
using testing::FixedRandom;
using testing::kNow;
using testing::response;

Outcome with_retry_after(int status, std::optional<std::string> retry_after,
                         std::optional<std::string> retry_after_ms = std::nullopt) {
  Outcome o = response(status);
  o.hints.retry_after = std::move(retry_after);
  o.hints.retry_after_ms = std::move(retry_after_ms);
  return o;
}

// --- server-requested waits ---

TEST(DecideDelay, RetryAfterSecondsOverridesTheStrategy) {
  const Verdict v = decide_at(kBuiltin, with_retry_after(429, "7"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{7000});
  EXPECT_EQ(reason_text(v), "status:429");
}

TEST(DecideDelay, RetryAfterIsNotCappedByBackoffMax) {
  Policy p = Policy::builtin();
  p.backoff.max = Millis{5000};
  EXPECT_EQ(decide_at(p, with_retry_after(503, "100")).delay, Millis{100000});
}

TEST(DecideDelay, RetryAfterZeroRetriesAtOnce) {
  const Verdict v = decide_at(kBuiltin, with_retry_after(503, "0"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{0});
}

TEST(DecideDelay, RetryAfterHttpDateIsTheTimeUntilThen) {
  const Verdict v = decide_at(kBuiltin, with_retry_after(503, "Thu, 15 Jan 2026 12:00:30 GMT"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{30000});
}

TEST(DecideDelay, RetryAfterPastDateRetriesAtOnce) {
  const Verdict v = decide_at(kBuiltin, with_retry_after(503, "Sun, 06 Nov 1994 08:49:37 GMT"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{0});
}

TEST(DecideDelay, RetryAfterMsWinsOverRetryAfter) {
  EXPECT_EQ(decide_at(kBuiltin, with_retry_after(429, "7", "250")).delay, Millis{250});
}

TEST(DecideDelay, FractionalRetryAfterMsRoundsUp) {
  EXPECT_EQ(decide_at(kBuiltin, with_retry_after(429, std::nullopt, "12.5")).delay, Millis{13});
}

TEST(DecideDelay, UnparseableRetryAfterMsFallsBackToRetryAfter) {
  EXPECT_EQ(decide_at(kBuiltin, with_retry_after(429, "3", "soon")).delay, Millis{3000});
}

TEST(DecideDelay, UnparseableRetryAfterFallsBackToTheStrategy) {
  for (const char* garbage : {"soon", "-5", "1.5", "99999999999999999999", ""}) {
    const Verdict v = decide_at(kBuiltin, with_retry_after(503, garbage));
    EXPECT_EQ(v.action, Action::retry) << garbage;
    EXPECT_EQ(v.delay, Millis{1500}) << garbage;
  }
}

TEST(DecideDelay, RetryAfterAboveMaxGivesUpNow) {
  const Verdict v = decide_at(kBuiltin, with_retry_after(429, "121"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "retry-after-too-long");
  EXPECT_EQ(v.what, "HTTP 429");
  EXPECT_EQ(v.delay, Millis{0});
}

TEST(DecideDelay, RetryAfterExactlyAtMaxIsHonoured) {
  const Verdict v = decide_at(kBuiltin, with_retry_after(429, "120"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{120000});
}

TEST(DecideDelay, RetryAfterMsAboveMaxGivesUpNow) {
  EXPECT_EQ(reason_text(decide_at(kBuiltin, with_retry_after(429, std::nullopt, "120000.1"))), "retry-after-too-long");
}

TEST(DecideDelay, FarFutureRetryAfterDateGivesUpNow) {
  EXPECT_EQ(reason_text(decide_at(kBuiltin, with_retry_after(503, "Fri, 31 Dec 9999 23:59:59 GMT"))),
            "retry-after-too-long");
}

TEST(DecideDelay, RetryAfterIgnoredWhenNotHonoured) {
  Policy p = Policy::builtin();
  p.honor_retry_after = false;
  EXPECT_EQ(decide_at(p, with_retry_after(429, "7")).delay, Millis{1500});
  const Verdict v = decide_at(p, with_retry_after(429, "3600", "3600000"));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{1500});
}

TEST(DecideDelay, RetryAfterOnAGiveUpDoesNotTurnItIntoARetry) {
  const Verdict v = decide_at(kBuiltin, with_retry_after(404, "1"));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "not-retryable");
}

// --- strategy delays through decide ---

TEST(DecideDelay, TriangularRuleSequence) {
  Policy p = Policy::builtin();
  p.max_attempts = 5;
  p.backoff = Backoff{Strategy::triangular, Millis{20}, Millis{50}, Jitter::none};
  EXPECT_EQ(decide_at(p, response(503, "", 1)).delay, Millis{20});
  EXPECT_EQ(decide_at(p, response(503, "", 2)).delay, Millis{50});
  EXPECT_EQ(decide_at(p, response(503, "", 3)).delay, Millis{50});
}

TEST(DecideDelay, JitterDrawsFromTheInjectedRandom) {
  Policy p = Policy::builtin();
  p.backoff.jitter = Jitter::full;
  EXPECT_EQ(decide_at(p, response(503, "", 2), 0.5).delay, Millis{1500});
  EXPECT_EQ(decide_at(p, response(503, "", 2), 0.0).delay, Millis{0});
}

TEST(DecideDelay, DecorrelatedJitterGrowsFromThePreviousDelay) {
  Policy p = Policy::builtin();
  p.backoff = Backoff{Strategy::exponential, Millis{1000}, Millis{60000}, Jitter::decorrelated};
  Outcome o = response(503, "", 2);
  o.previous_delay = Millis{5000};
  EXPECT_EQ(decide_at(p, o, 0.5).delay, Millis{8000});
}

TEST(DecideDelay, ServerWaitDoesNotDrawRandomness) {
  Policy p = Policy::builtin();
  p.backoff.jitter = Jitter::full;
  FixedRandom random(0.5);
  decide(p, with_retry_after(503, "2"), random, kNow);
  EXPECT_EQ(random.calls(), 0);
}

// --- attempt limits ---

TEST(DecideLimits, ThreeAttemptsMeansTwoRetries) {
  EXPECT_EQ(decide_at(kBuiltin, response(503, "", 1)).action, Action::retry);
  EXPECT_EQ(decide_at(kBuiltin, response(503, "", 2)).action, Action::retry);
  const Verdict v = decide_at(kBuiltin, response(503, "", 3));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "exhausted");
  EXPECT_EQ(v.what, "HTTP 503");
}

TEST(DecideLimits, MaxAttemptsOneNeverRetries) {
  Policy p = Policy::builtin();
  p.max_attempts = 1;
  const Verdict v = decide_at(p, response(503));
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "exhausted");
}

TEST(DecideLimits, MaxAttemptsMinusOneIsUnlimited) {
  Policy p = Policy::builtin();
  p.max_attempts = -1;
  const Verdict v = decide_at(p, response(503, "", 1000));
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{60000});
  EXPECT_EQ(decide_at(p, response(503, "", INT_MAX)).action, Action::retry);
}

TEST(DecideLimits, UnlimitedAttemptsStopAtMaxElapsed) {
  Policy p = Policy::builtin();
  p.max_attempts = -1;
  Outcome o = response(503, "", 40);
  o.elapsed = p.max_elapsed - Millis{59999};
  const Verdict v = decide_at(p, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "max-elapsed");
}

TEST(DecideLimits, DelayEndingExactlyAtMaxElapsedIsAllowed) {
  Outcome o = response(503);
  o.elapsed = kBuiltin.max_elapsed - Millis{1500};
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{1500});
}

TEST(DecideLimits, DelayEndingPastMaxElapsedGivesUp) {
  Outcome o = response(503);
  o.elapsed = kBuiltin.max_elapsed - Millis{1499};
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "max-elapsed");
}

TEST(DecideLimits, ServerWaitPastMaxElapsedGivesUp) {
  Outcome o = with_retry_after(429, "60");
  o.elapsed = kBuiltin.max_elapsed - Millis{59999};
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "max-elapsed");
}

TEST(DecideLimits, HugeElapsedDoesNotOverflow) {
  Outcome o = response(503);
  o.elapsed = Millis{LLONG_MAX - 10};
  Policy p = Policy::builtin();
  p.max_elapsed = Millis{LLONG_MAX};
  EXPECT_EQ(reason_text(decide_at(p, o)), "max-elapsed");
}

TEST(DecideLimits, DelayReachingTheHostDeadlineGivesUp) {
  Outcome o = response(503);
  o.remaining = Millis{1500};
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(reason_text(v), "deadline");
  EXPECT_EQ(v.what, "HTTP 503");
}

TEST(DecideLimits, DelayShorterThanTheHostDeadlineRetries) {
  Outcome o = response(503);
  o.remaining = Millis{1501};
  const Verdict v = decide_at(kBuiltin, o);
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, Millis{1500});
}

TEST(DecideLimits, ServerWaitPastTheHostDeadlineGivesUp) {
  Outcome o = with_retry_after(429, "7");
  o.remaining = Millis{5000};
  EXPECT_EQ(reason_text(decide_at(kBuiltin, o)), "deadline");
}

TEST(DecideLimits, NoHostDeadlineMeansNoDeadlineCheck) {
  Outcome o = with_retry_after(429, "100");
  EXPECT_EQ(decide_at(kBuiltin, o).action, Action::retry);
}

}  // namespace
}  // namespace curlretry::core
