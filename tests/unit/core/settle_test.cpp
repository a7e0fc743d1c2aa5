#include "core/settle.h"

#include <gtest/gtest.h>

#include "decide_test_support.h"

namespace curlretry::core::settle {
namespace {

using core::testing::decide_at;
using core::testing::failure;
using core::testing::response;
using std::chrono::milliseconds;

Verdict retry_in(Millis delay) { return Verdict{Action::retry, delay, Reason::status, "503", "HTTP 503", {}, {}}; }
Verdict given_up(Reason reason) { return Verdict{Action::give_up, Millis{0}, reason, "401", "HTTP 401", {}, {}}; }

TEST(SettleCommit, ARetryGivesUpOnceTheProgramHasTheHeaders) {
  Verdict v = retry_in(milliseconds(500));
  commit(v, true);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(v.reason, Reason::committed);
  EXPECT_EQ(reason_text(v), "committed");
  EXPECT_EQ(v.what, "HTTP 503");  // the log line still says what happened
}

TEST(SettleCommit, LeavesARetryWithoutDeliveredHeadersAndEveryGiveUpAlone) {
  Verdict v = retry_in(milliseconds(500));
  commit(v, false);
  EXPECT_EQ(v.action, Action::retry);
  EXPECT_EQ(v.delay, milliseconds(500));
  EXPECT_EQ(v.reason, Reason::status);
  for (Reason reason : {Reason::success, Reason::exhausted, Reason::not_retryable}) {
    Verdict g = given_up(reason);
    commit(g, true);
    EXPECT_EQ(g.reason, reason);
  }
}

TEST(SettleCredential, AskedOnlyForAnUncommittedGiveUpTheRuleRefreshes) {
  EXPECT_TRUE(wants_credential(given_up(Reason::status), true, false));
  EXPECT_FALSE(wants_credential(given_up(Reason::status), false, false));   // not in auth.on, or tried
  EXPECT_FALSE(wants_credential(given_up(Reason::status), true, true));     // the program has part of it
  EXPECT_FALSE(wants_credential(retry_in(milliseconds(10)), true, false));  // retried anyway
}

TEST(SettleCredential, AValueOrOneOnItsWayIsOneRetryAtOnce) {
  for (Credential result : {Credential::refreshed, Credential::running}) {
    Verdict v = given_up(Reason::exhausted);
    v.delay = milliseconds(900);
    credential(v, result);
    EXPECT_EQ(v.action, Action::retry);
    EXPECT_EQ(v.delay, milliseconds(0));
    EXPECT_EQ(v.reason, Reason::auth_refresh);
    EXPECT_EQ(reason_text(v), "auth-refresh");
    EXPECT_EQ(v.what, "HTTP 401");
  }
}

TEST(SettleCredential, AFailedCommandKeepsTheGiveUp) {
  Verdict v = given_up(Reason::not_retryable);
  credential(v, Credential::failed);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(v.reason, Reason::not_retryable);
}

TEST(SettleReplay, ARetryWhoseUploadDidNotRewindGivesUp) {
  EXPECT_TRUE(wants_rewind(retry_in(milliseconds(1))));
  EXPECT_FALSE(wants_rewind(given_up(Reason::status)));
  Verdict v = retry_in(milliseconds(250));
  replay(v, false);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(v.reason, Reason::not_replayable);
  Verdict ok = retry_in(milliseconds(250));
  replay(ok, true);
  EXPECT_EQ(ok.action, Action::retry);
  EXPECT_EQ(ok.delay, milliseconds(250));
  EXPECT_EQ(ok.reason, Reason::status);
}

TEST(SettleOrder, ARefreshRetryStillNeedsItsUploadRewound) {
  // decide's 401 give-up, refreshed, then an upload that cannot go again: given up for that.
  const Policy policy = Policy::builtin();
  Verdict v = decide_at(policy, response(401));
  ASSERT_EQ(v.action, Action::give_up);
  commit(v, false);
  ASSERT_TRUE(wants_credential(v, true, false));
  credential(v, Credential::refreshed);
  ASSERT_TRUE(wants_rewind(v));
  replay(v, false);
  EXPECT_EQ(v.action, Action::give_up);
  EXPECT_EQ(v.reason, Reason::not_replayable);
}

TEST(SettleOrder, HeadersDeliveredBeforeATransportErrorAreNeverRefreshedOrRewound) {
  // A response's headers reached the program, then the connection broke: decide would retry.
  const Policy policy = Policy::builtin();
  Verdict v = decide_at(policy, failure(Transport::reset));
  ASSERT_EQ(v.action, Action::retry);
  commit(v, true);
  EXPECT_EQ(v.reason, Reason::committed);
  EXPECT_FALSE(wants_credential(v, true, true));
  EXPECT_FALSE(wants_rewind(v));
}

}  // namespace
}  // namespace curlretry::core::settle
