// retry_on.unanswered_post (issue 18 item 9): whether a POST/PATCH that got no response at all is
// sent again. The seeds' default says yes; false keeps every request that may have arrived.
#include <gtest/gtest.h>

#include "decide_test_support.h"

namespace curlretry::core {
namespace {

using testing::decide_at;
using testing::failure;
using testing::response;

Outcome post(Outcome o) {
  o.unsafe_method = true;
  return o;
}

Policy posts_not_repeated() {
  Policy p = Policy::builtin();
  p.retry_unanswered_post = false;
  return p;
}

TEST(DecideUnansweredPost, BuiltinSendsAnUnansweredPostAgain) {
  EXPECT_TRUE(Policy::builtin().retry_unanswered_post);
  EXPECT_EQ(decide_at(Policy::builtin(), post(failure(Transport::empty_reply))).action, Action::retry);
}

TEST(DecideUnansweredPost, FalseGivesUpOnEveryFailureAfterTheRequestLeft) {
  for (Transport t : {Transport::empty_reply, Transport::reset, Transport::send, Transport::recv,
                      Transport::http2_stream}) {
    const Verdict v = decide_at(posts_not_repeated(), post(failure(t)));
    EXPECT_EQ(v.action, Action::give_up) << to_string(t);
    EXPECT_EQ(reason_text(v), "unanswered-post") << to_string(t);
  }
}

TEST(DecideUnansweredPost, FalseStillRetriesWhatNeverLeftAndWhatGotAnAnswer) {
  EXPECT_EQ(decide_at(posts_not_repeated(), post(failure(Transport::connect_refused))).action, Action::retry);
  EXPECT_EQ(decide_at(posts_not_repeated(), post(failure(Transport::tls_handshake))).action, Action::retry);
  EXPECT_EQ(decide_at(posts_not_repeated(), post(response(503))).action, Action::retry);
  EXPECT_EQ(decide_at(posts_not_repeated(), failure(Transport::empty_reply)).action, Action::retry);  // a GET
}

}  // namespace
}  // namespace curlretry::core
