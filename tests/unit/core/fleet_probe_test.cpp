#include "core/fleet_probe.h"

#include <gtest/gtest.h>

#include "core/fleet_verdict.h"

namespace curlretry::core::fleet_probe {
namespace {

using std::chrono::milliseconds;

// Odd: a stamp keeps kT0 + an even offset as it is (stamps set the low bit: + an odd one rounds up).
constexpr std::int64_t kT0 = 1'700'000'000'001;
constexpr std::uint32_t at(std::int64_t ms) { return static_cast<std::uint32_t>(ms) | 1u; }

// A run that began at kT0 and failed last at kT0 + `last`.
budget::FailingRun run_of(std::int64_t last = 0) { return budget::FailingRun{at(kT0), at(kT0 + last)}; }

TEST(FleetProbe, PackRoundTrips) {
  const Probe p{0xdeadbeef, 8000};
  EXPECT_EQ(unpack(pack(p)).next_at, p.next_at);
  EXPECT_EQ(unpack(pack(p)).gap, p.gap);
  EXPECT_EQ(pack(Probe{}), 0u);
}

TEST(FleetProbe, AnOutageIsARunOfThreeSecondsWithNoSuccessSinceItBegan) {
  const Millis age = outage_age(false);
  EXPECT_EQ(age, budget::kOutageAge);
  EXPECT_FALSE(outage(run_of(), 0, kT0 + 2998, age));  // a fresh burst: its first failures are younger
  EXPECT_TRUE(outage(run_of(), 0, kT0 + 3000, age));
  EXPECT_TRUE(outage(run_of(), at(kT0 - 500), kT0 + 60000, age));   // the last success was before the run
  EXPECT_FALSE(outage(run_of(), at(kT0 + 100), kT0 + 60000, age));  // one success since: the key answers
  EXPECT_FALSE(outage(budget::FailingRun{}, 0, kT0 + 60000, age));  // no run at all
}

TEST(FleetProbe, ForAnUnattendedRetryAnOutageIsARunOfOneSecond) {
  const Millis age = outage_age(true);
  EXPECT_EQ(age, kUnattendedAge);
  EXPECT_FALSE(outage(run_of(), 0, kT0 + 998, age));  // a fresh burst's concurrent first failures
  EXPECT_TRUE(outage(run_of(), 0, kT0 + 1000, age));
  // The default backoff (1.5 s) brings a fresh outage's first unattended retries after that: they
  // are probed, not sent from the bank.
  EXPECT_LT(kUnattendedAge, Policy{}.backoff.base);
  EXPECT_FALSE(outage(run_of(), at(kT0 + 100), kT0 + 60000, age));  // one success since: the key answers
}

TEST(FleetProbe, TheFirstClaimGoesAndSpacesTheNextByTheRetrysOwnBackoff) {
  const Claim c = claim(Probe{}, run_of(), kT0 + 3000, milliseconds(1500));
  EXPECT_TRUE(c.go);
  EXPECT_EQ(c.next.gap, 1500u);
  EXPECT_EQ(c.next.next_at, at(kT0 + 4500));
}

TEST(FleetProbe, ADueProbeIsLeftToAYoungerWaiterAndTheRetryLooksAgainAfterOnePoll) {
  const Claim left = claim(Probe{}, run_of(), kT0 + 3000, milliseconds(1500), true);
  EXPECT_FALSE(left.go);
  EXPECT_EQ(left.wait, fleet_verdict::kTokenPoll);
  // Not due: the wait until it is, whoever is younger.
  const Probe due_later{at(kT0 + 4500), 1500};
  EXPECT_EQ(claim(due_later, run_of(), kT0 + 4000, milliseconds(1500), true).wait, milliseconds(500));
}

TEST(FleetProbe, OthersWaitUntilTheNextProbeIsDue) {
  const Probe p = claim(Probe{}, run_of(), kT0 + 3000, milliseconds(1500)).next;
  const Claim c = claim(p, run_of(), kT0 + 3100, milliseconds(1500));
  EXPECT_FALSE(c.go);
  EXPECT_EQ(c.wait, milliseconds(1400));
  EXPECT_EQ(claim(p, run_of(), kT0 + 4498, milliseconds(1500)).wait, milliseconds(2));
  EXPECT_TRUE(claim(p, run_of(), kT0 + 4500, milliseconds(1500)).go);
}

TEST(FleetProbe, TheSpacingDoublesUpToTheCap) {
  Probe p;
  std::int64_t now = kT0 + 3000;
  std::vector<std::uint32_t> gaps;
  for (int i = 0; i < 6; ++i) {
    const Claim c = claim(p, run_of(), now, milliseconds(1500));
    ASSERT_TRUE(c.go) << i;
    p = c.next;
    gaps.push_back(p.gap);
    now += p.gap;
  }
  EXPECT_EQ(gaps, (std::vector<std::uint32_t>{1500, 3000, 6000, 8000, 8000, 8000}));
  // In a 60 s outage that is 3 s old when the probes begin: about 60 / 8 probes, not 60 retries.
}

TEST(FleetProbe, ALongerOwnBackoffSpacesAtLeastThatMuchWithinTheCapAndAShortOneAtLeastTheFloor) {
  EXPECT_EQ(claim(Probe{}, run_of(), kT0 + 3000, milliseconds(48000)).next.gap, 8000u);
  EXPECT_EQ(claim(Probe{}, run_of(), kT0 + 3000, milliseconds(10)).next.gap, 1000u);
  const Probe p{at(kT0 + 5000), 2000};  // claimed at +3 s with 2 s
  EXPECT_EQ(claim(p, run_of(), kT0 + 5000, milliseconds(6000)).next.gap, 6000u);
}

TEST(FleetProbe, AWordFromAnEarlierRunStartsANewSeries) {
  // Claimed with the cap an hour before this run began: the new outage starts from the backoff.
  const Probe old{at(kT0 - 3'600'000 + 8000), 8000};
  const Claim c = claim(old, run_of(), kT0 + 3000, milliseconds(1500));
  EXPECT_TRUE(c.go);
  EXPECT_EQ(c.next.gap, 1500u);
}

TEST(FleetProbe, AWordFarAheadIsAClockThatSteppedBackAndDoesNotHoldTheFleet) {
  const Probe ahead{at(kT0 + 3000 + 60000), 8000};
  EXPECT_TRUE(claim(ahead, run_of(), kT0 + 3000, milliseconds(1500)).go);
}

TEST(FleetProbe, AFailedProbePushesTheNextOneAWholeSpacingAfterItsAnswer) {
  const Probe p = claim(Probe{}, run_of(), kT0 + 3000, milliseconds(4000)).next;  // next at +7 s
  const Probe slow = after_failure(p, kT0 + 6000);                                // answered after 3 s
  EXPECT_EQ(slow.next_at, at(kT0 + 10000));
  EXPECT_EQ(slow.gap, 4000u);
  EXPECT_EQ(after_failure(p, kT0 + 3000).next_at, p.next_at);  // answered at once: as claimed
  EXPECT_EQ(after_failure(Probe{at(kT0 + 9000), 4000}, kT0 + 3000).next_at, at(kT0 + 9000));  // never sooner
  EXPECT_EQ(after_failure(Probe{}, kT0).gap, 1000u);
}

TEST(FleetProbe, AClaimTheFleetRefusedWaitsForTheFleetsNextProbe) {
  const Probe mine = claim(Probe{}, run_of(), kT0 + 3000, milliseconds(4000)).next;  // next at +7 s
  const Probe deferred = defer(mine, kT0 + 3000, milliseconds(1200));                // the fleet's is due at +4.2 s
  EXPECT_EQ(deferred.next_at, at(kT0 + 4200));
  EXPECT_EQ(deferred.gap, 4000u);  // the spacing this machine's series reached
  EXPECT_EQ(claim(deferred, run_of(), kT0 + 4000, milliseconds(4000)).wait, milliseconds(200));
  EXPECT_EQ(defer(mine, kT0 + 3000, milliseconds(60000)).next_at, at(kT0 + 3000 + 8000));  // within the cap
}

TEST(FleetProbe, ProbesKeepTheRunGoingAcrossTheirSpacing) {
  EXPECT_EQ(run_gap(Probe{}, run_of()), budget::kRunGap);
  const Probe p = claim(Probe{}, run_of(), kT0 + 3000, milliseconds(8000)).next;
  EXPECT_EQ(run_gap(p, run_of()), budget::kRunGap + milliseconds(8000));
  // A word from before the run: the run's own gap.
  EXPECT_EQ(run_gap(Probe{at(kT0 - 100000), 8000}, run_of()), budget::kRunGap);
  // In the run: a probe's failure 8 s after the last one continues it; without probes it begins anew.
  const budget::FailingRun r = run_of(3000);
  EXPECT_EQ(budget::note_failure(r, 0, kT0 + 11000, run_gap(p, r)).began, at(kT0));
  EXPECT_EQ(budget::note_failure(r, 0, kT0 + 11000).began, at(kT0 + 11000));
}

namespace fv = fleet_verdict;

// The default policy: 3 attempts, 1.5 s exponential backoff (1.5 s + 3 s of its own waits).
const fv::Limits kOwn = fv::limits_for(Policy{}, false, std::nullopt);

TEST(FleetProbeVerdict, TheProbeMayHoldARetryAsLongAsItsOwnScheduleCouldStillMeetARecovery) {
  EXPECT_EQ(kOwn.max_probe_wait, milliseconds(1500 + 3000) + kMaxGap);
  Policy six;
  six.max_attempts = 6;
  six.backoff.base = milliseconds(50);
  EXPECT_EQ(fv::limits_for(six, false, std::nullopt).max_probe_wait,
            milliseconds(50 + 100 + 200 + 400 + 800) + kMaxGap);
  six.max_attempts = -1;
  EXPECT_EQ(fv::limits_for(six, false, std::nullopt).max_probe_wait, Millis::max());
}

TEST(FleetProbeVerdict, TheClaimerGoesWithoutAToken) {
  const fv::Gate g = fv::at_probe(milliseconds(0), std::nullopt, {}, kOwn);
  EXPECT_EQ(g.kind, fv::Kind::go);
  EXPECT_TRUE(g.probe);
  EXPECT_EQ(fv::describe(g), "go now as the fleet's probe");
}

TEST(FleetProbeVerdict, OthersWaitLookingAgainSoonSoThatARecoveryReleasesThem) {
  const fv::Gate g = fv::at_probe(milliseconds(0), milliseconds(7500), {}, kOwn);
  EXPECT_EQ(g.kind, fv::Kind::wait_token);
  EXPECT_TRUE(g.probe);
  EXPECT_EQ(g.wait, fv::kTokenPoll);
  EXPECT_EQ(g.eta, milliseconds(7500));
  EXPECT_EQ(fv::describe(g), "would wait 7500 ms for the fleet's probe");
}

TEST(FleetProbeVerdict, ANonPersistentRetryWaitsItsOwnAllowanceThenGivesUpPersistentNever) {
  // One backoff's wait (the token's allowance) is not the probe's: the next probe 1.9 s away is
  // still waited for after 1.5 s (a request with 50 ms backoffs gave up here, saved with the fleet off).
  EXPECT_EQ(fv::at_probe(milliseconds(0), milliseconds(1900), fv::Waited{{}, {}, milliseconds(1500)}, kOwn).kind,
            fv::Kind::wait_token);
  const fv::Gate spent =
      fv::at_probe(milliseconds(0), milliseconds(7500), fv::Waited{{}, {}, kOwn.max_probe_wait}, kOwn);
  EXPECT_EQ(spent.kind, fv::Kind::give_up_budget);
  EXPECT_TRUE(spent.probe);
  fv::Limits persistent = kOwn;
  persistent.persistent = true;
  EXPECT_EQ(
      fv::at_probe(milliseconds(0), milliseconds(7500), fv::Waited{{}, {}, milliseconds(3'600'000)}, persistent).kind,
      fv::Kind::wait_token);
  // The deadline comes first in every mode: a probe after it cannot help.
  persistent.time_left = milliseconds(2000);
  EXPECT_EQ(fv::at_probe(milliseconds(0), milliseconds(7500), {}, persistent).kind, fv::Kind::give_up_budget);
}

TEST(FleetProbeVerdict, ATokenWaitDoesNotUseUpTheProbesAllowance) {
  // A retry waited for a token longer than the probe's whole allowance (the token's is
  // backoff.max_ms); then the key failed outright. It waits for the probe as long as any retry
  // that meets the outage now (it was given up at once), and the probe's own wait still ends.
  fv::Limits limits = kOwn;
  limits.max_token_wait = kOwn.max_probe_wait * 4;
  const fv::Waited long_token_wait{{}, kOwn.max_probe_wait * 2, {}};
  const fv::Gate g = fv::at_probe(milliseconds(0), milliseconds(7500), long_token_wait, limits);
  EXPECT_EQ(g.kind, fv::Kind::wait_token);
  EXPECT_TRUE(g.probe);
  const fv::Waited both_spent{{}, kOwn.max_probe_wait * 2, kOwn.max_probe_wait};
  EXPECT_EQ(fv::at_probe(milliseconds(0), milliseconds(7500), both_spent, limits).kind, fv::Kind::give_up_budget);
  // And the other way: the probe's wait leaves the token's allowance whole.
  const fv::Waited long_probe_wait{{}, {}, limits.max_token_wait * 2};
  EXPECT_EQ(fv::at_send(milliseconds(0), fv::Bucket{false, milliseconds(500)}, long_probe_wait, limits).kind,
            fv::Kind::wait_token);
}

TEST(FleetProbeVerdict, AYoungRunsProbeDelaysButNeverDeniesWhatTheBankWouldSend) {
  // An unattended retry whose next probe cannot come within the program's 2 s: in a run younger
  // than kOutageAge the token decides (the bank, as for every retry of so young a run); in an
  // older one the retry gives up, as any retry there does.
  fv::Limits timed = fv::limits_for(Policy{}, true, milliseconds(2000));
  const fv::Gate refused = fv::at_probe(milliseconds(0), milliseconds(7500), {}, timed);
  ASSERT_EQ(refused.kind, fv::Kind::give_up_budget);
  EXPECT_FALSE(fv::probe_stands(refused, run_of(), kT0 + 1500));
  EXPECT_FALSE(fv::probe_stands(refused, run_of(), kT0 + budget::kOutageAge.count() - 2));
  EXPECT_TRUE(fv::probe_stands(refused, run_of(), kT0 + budget::kOutageAge.count()));
  EXPECT_TRUE(fv::probe_stands(refused, run_of(), kT0 + 60000));
  // Every other answer of the probe stands at any age: a wait, a go, a cooldown.
  EXPECT_TRUE(fv::probe_stands(fv::at_probe(milliseconds(0), milliseconds(7500), {}, kOwn), run_of(), kT0 + 1500));
  EXPECT_TRUE(fv::probe_stands(fv::at_probe(milliseconds(0), std::nullopt, {}, kOwn), run_of(), kT0 + 1500));
  EXPECT_TRUE(fv::probe_stands(fv::at_probe(milliseconds(900), std::nullopt, {}, kOwn), run_of(), kT0 + 1500));
}

TEST(FleetProbeVerdict, ACooldownIsWaitedForFirst) {
  const fv::Gate g = fv::at_probe(milliseconds(4000), std::nullopt, {}, kOwn);
  EXPECT_EQ(g.kind, fv::Kind::wait_cooldown);
  EXPECT_FALSE(g.probe);
}

}  // namespace
}  // namespace curlretry::core::fleet_probe
