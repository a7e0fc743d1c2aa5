#include "core/fleet_verdict.h"

#include <gtest/gtest.h>

#include "core/retry_tokens.h"

namespace curlretry::core::fleet_verdict {
namespace {

using std::chrono::milliseconds;

const Limits kLimits{milliseconds(120000), milliseconds(30000), false, std::nullopt};

TEST(FleetVerdict, PlanKeepsThePolicysDelayWhenNothingCools) {
  const Gate g = plan(milliseconds(1500), milliseconds(0), kLimits);
  EXPECT_EQ(g.kind, Kind::go);
  EXPECT_EQ(g.wait, milliseconds(1500));
  EXPECT_EQ(plan(milliseconds(1500), milliseconds(900), kLimits).wait, milliseconds(1500));
}

TEST(FleetVerdict, PlanStretchesTheDelayToTheCooldownWhenItFits) {
  const Gate g = plan(milliseconds(1500), milliseconds(4000), kLimits);
  EXPECT_EQ(g.kind, Kind::wait_cooldown);
  EXPECT_EQ(g.wait, milliseconds(4000));
}

TEST(FleetVerdict, PlanDoesNotWaitForACooldownLongerThanRetryAfterMax) {
  // Issue 23: another request's 200 s Retry-After (which its own process refused) neither holds
  // this retry for 120 s nor makes it give up: it goes at its own time.
  const Gate g = plan(milliseconds(10), milliseconds(200000), kLimits);
  EXPECT_EQ(g.kind, Kind::go);
  EXPECT_EQ(g.wait, milliseconds(10));
  EXPECT_EQ(plan(milliseconds(10), milliseconds(120000), kLimits).kind, Kind::wait_cooldown);
}

TEST(FleetVerdict, PlanKeepsItsOwnDelayWhenTheCooldownCannotFitTheTimeLeft) {
  // Issue 23: a cooldown never makes a retry give up; one that cannot fit is not waited for.
  Limits short_left = kLimits;
  short_left.time_left = milliseconds(3000);
  const Gate g = plan(milliseconds(10), milliseconds(3000), short_left);
  EXPECT_EQ(g.kind, Kind::go);
  EXPECT_EQ(g.wait, milliseconds(10));
  EXPECT_EQ(plan(milliseconds(10), milliseconds(2999), short_left).kind, Kind::wait_cooldown);
}

TEST(FleetVerdict, ATakenTokenGoesAtOnce) {
  EXPECT_EQ(at_send(milliseconds(0), Bucket{true, {}}, {}, kLimits).kind, Kind::go);
}

TEST(FleetVerdict, NoTokenWaitsInsteadOfGivingUp) {
  const Gate g = at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {}, kLimits);
  EXPECT_EQ(g.kind, Kind::wait_token);
  EXPECT_EQ(g.wait, kTokenPoll);  // looks again soon: a refund may come before the trickle
  EXPECT_EQ(g.eta, milliseconds(800));
  EXPECT_EQ(at_send(milliseconds(0), Bucket{false, milliseconds(30)}, {}, kLimits).wait, milliseconds(30));
  // A token there for a younger waiter: a poll later (it looked again every millisecond, up to a
  // hundred times, until the younger one's own look took it).
  EXPECT_EQ(at_send(milliseconds(0), Bucket{false, milliseconds(0)}, {}, kLimits).wait, kTokenPoll);
}

TEST(FleetVerdict, TheTokenWaitLastsAtMostOneBackoffMax) {
  const Gate near_end =
      at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {milliseconds(0), milliseconds(29950)}, kLimits);
  EXPECT_EQ(near_end.kind, Kind::wait_token);
  EXPECT_EQ(near_end.wait, milliseconds(50));
  const Gate over =
      at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {milliseconds(0), milliseconds(30000)}, kLimits);
  EXPECT_EQ(over.kind, Kind::give_up_budget);
}

TEST(FleetVerdict, PersistentModeNeverGivesUpForTheBudget) {
  Limits persistent = kLimits;
  persistent.persistent = true;
  const Gate g =
      at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {milliseconds(0), milliseconds(3600000)}, persistent);
  EXPECT_EQ(g.kind, Kind::wait_token);
  EXPECT_EQ(at_send(milliseconds(0), Bucket{false, std::nullopt}, {}, persistent).wait, kTokenPoll);
}

TEST(FleetVerdict, ABudgetOfZeroGivesUpAtOnceEvenInPersistentMode) {
  Limits persistent = kLimits;
  persistent.persistent = true;
  EXPECT_EQ(at_send(milliseconds(0), Bucket{false, Millis::max()}, {}, persistent).kind, Kind::give_up_budget);
}

TEST(FleetVerdict, ATokenThatCannotComeBeforeTheDeadlineGivesUp) {
  Limits left = kLimits;
  left.persistent = true;
  left.time_left = milliseconds(500);
  EXPECT_EQ(at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {}, left).kind, Kind::give_up_budget);
  const Gate g = at_send(milliseconds(0), Bucket{false, milliseconds(400)}, {}, left);
  EXPECT_EQ(g.kind, Kind::wait_token);
  EXPECT_EQ(g.wait, kTokenPoll);
  left.time_left = milliseconds(40);
  EXPECT_EQ(at_send(milliseconds(0), Bucket{false, milliseconds(30)}, {}, left).wait, milliseconds(30));
}

TEST(FleetVerdict, ARetryWhoseAnswerWasCutGoesOverBudgetWhereOthersGiveUp) {
  // Its answer can no longer reach the program whole: a give-up would hand it a write error and
  // part of a body (stop 37's fault-injection failures). It waits as long as any retry, then goes.
  Limits cut = kLimits;
  cut.answer_cut = true;
  const Gate waits = at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {}, cut);
  EXPECT_EQ(waits.kind, Kind::wait_token);
  EXPECT_FALSE(waits.over_budget);
  // The allowance spent (backoff.max_ms), a budget of zero, a token only after the deadline.
  const Gate spent = at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {milliseconds(0), milliseconds(30000)}, cut);
  EXPECT_EQ(spent.kind, Kind::go);
  EXPECT_TRUE(spent.over_budget);
  EXPECT_EQ(spent.eta, milliseconds(800));
  EXPECT_TRUE(at_send(milliseconds(0), Bucket{false, Millis::max()}, {}, cut).over_budget);
  cut.time_left = milliseconds(500);
  EXPECT_TRUE(at_send(milliseconds(0), Bucket{false, milliseconds(800)}, {}, cut).over_budget);
  // A token in hand is a plain go; a cooldown is still waited for.
  EXPECT_FALSE(at_send(milliseconds(0), Bucket{true, {}}, {}, cut).over_budget);
  EXPECT_EQ(at_send(milliseconds(200), Bucket{false, Millis::max()}, {}, cut).kind, Kind::wait_cooldown);
  // The probe's wait the same way: it goes beside the probe, over budget.
  cut.time_left = std::nullopt;
  const Gate probe = at_probe(milliseconds(0), milliseconds(5000), {milliseconds(0), milliseconds(0), milliseconds(1)}, Limits{cut.max_server_wait, cut.max_token_wait, false, std::nullopt, milliseconds(1), true});
  EXPECT_EQ(probe.kind, Kind::go);
  EXPECT_TRUE(probe.over_budget);
  EXPECT_NE(describe(spent).find("without a fleet token"), std::string::npos);
}

TEST(FleetVerdict, ACooldownRaisedMeanwhileIsWaitedForWithinRetryAfterMax) {
  const Gate g = at_send(milliseconds(2000), Bucket{true, {}}, {milliseconds(1000), milliseconds(0)}, kLimits);
  EXPECT_EQ(g.kind, Kind::wait_cooldown);
  EXPECT_EQ(g.wait, milliseconds(2000));
  // Raised over and over past retry_after.max_ms in all: the retry goes on to its token.
  EXPECT_EQ(at_send(milliseconds(2000), Bucket{true, {}}, {milliseconds(119000), milliseconds(0)}, kLimits).kind,
            Kind::go);
  EXPECT_EQ(
      at_send(milliseconds(2000), Bucket{false, milliseconds(300)}, {milliseconds(119000), milliseconds(0)}, kLimits)
          .kind,
      Kind::wait_token);
}

TEST(FleetVerdict, DescribesItselfForExplain) {
  EXPECT_EQ(describe(Gate{Kind::wait_token, kTokenPoll, milliseconds(3200)}), "would wait 3200 ms for a fleet token");
  EXPECT_EQ(describe(Gate{Kind::go, milliseconds(0), {}}), "go now");
  EXPECT_NE(describe(Gate{Kind::give_up_budget, milliseconds(0), {}}).find("budget"), std::string::npos);
}

TEST(FleetTokens, EtaIsTheTrickleTimeOfTheMissingThousandths) {
  const budget::Budget b{10, milliseconds(10000), 10};  // one token a second
  EXPECT_EQ(budget::eta(budget::Bucket{1000, 1}, b, 0), milliseconds(0));
  EXPECT_EQ(budget::eta(budget::Bucket{0, 1}, b, 0), milliseconds(1000));
  EXPECT_EQ(budget::eta(budget::Bucket{999, 1}, b, 0), milliseconds(1));
  EXPECT_EQ(budget::eta(budget::Bucket{500, 1}, b, 1000), milliseconds(1500));
  EXPECT_EQ(budget::eta(budget::Bucket{0, 1}, budget::Budget{10, milliseconds(10000), 0}, 0), std::nullopt);
  // What eta() promises, refill() delivers.
  const std::int64_t now = 1'764'460'800'001;
  budget::Bucket empty{0, static_cast<std::uint32_t>(static_cast<std::uint64_t>(now)) | 1u};
  const auto wait = budget::eta(budget::refill(empty, b, now, 0, 1), b, 0);
  ASSERT_TRUE(wait);
  budget::Bucket later = budget::refill(empty, b, now + wait->count(), 0, 1);
  EXPECT_TRUE(budget::take(later, 0));
}

}  // namespace
}  // namespace curlretry::core::fleet_verdict
