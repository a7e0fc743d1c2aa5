#include "core/token_queue.h"

#include <gtest/gtest.h>

namespace curlretry::core::token_queue {
namespace {

constexpr std::int64_t kNow = 1'764'460'800'000;

TEST(TokenQueue, PacksIntoOneWord) {
  const Queue q{0xdeadbeef, 0xabcdef, 0x7f};
  EXPECT_EQ(unpack(pack(q)).youngest, 0xdeadbeefu);
  EXPECT_EQ(unpack(pack(q)).seen, 0xabcdefu);
  EXPECT_EQ(unpack(pack(q)).grants, 0x7f);
  EXPECT_EQ(unpack(pack(Queue{1, 0xffffffffu, 0})).seen, 0xffffffu);  // the stamp keeps 24 bits
  EXPECT_EQ(pack(Queue{}), 0u);
}

TEST(TokenQueue, AnEmptyQueueLetsAnyoneTake) {
  EXPECT_FALSE(yields(Queue{}, stamp_of(kNow - 5000), kNow));
  EXPECT_NE(stamp_of(std::int64_t{1} << 32), 0u);  // a birth 0 mod 2^32 still waits under a stamp
}

TEST(TokenQueue, AnOlderRequestLeavesTheTokenToAYoungerOneWaiting) {
  const std::uint32_t old_one = stamp_of(kNow - 20'000);
  const std::uint32_t fresh_one = stamp_of(kNow - 1'000);
  Queue q = note_waiting(Queue{}, fresh_one, kNow);
  EXPECT_EQ(q.youngest, fresh_one);
  EXPECT_TRUE(yields(q, old_one, kNow + 50));
  EXPECT_FALSE(yields(q, fresh_one, kNow + 50));  // the youngest itself takes it
  // An older waiter does not displace the younger one.
  EXPECT_EQ(note_waiting(q, old_one, kNow + 60).youngest, fresh_one);
  // A still younger one does.
  const std::uint32_t fresher = stamp_of(kNow - 10);
  EXPECT_EQ(note_waiting(q, fresher, kNow + 60).youngest, fresher);
}

TEST(TokenQueue, AWaiterThatStoppedLookingHoldsNothingBack) {
  const std::uint32_t old_one = stamp_of(kNow - 20'000);
  const Queue q = note_waiting(Queue{}, stamp_of(kNow - 1'000), kNow);
  EXPECT_TRUE(yields(q, old_one, kNow + kWaiterFresh.count() - 1));
  EXPECT_FALSE(yields(q, old_one, kNow + kWaiterFresh.count()));
  // And the older one, still looking, is then the youngest that waits.
  EXPECT_EQ(note_waiting(q, old_one, kNow + kWaiterFresh.count()).youngest, old_one);
}

TEST(TokenQueue, TheYoungestTakingItsTokenLeavesTheQueue) {
  const std::uint32_t fresh_one = stamp_of(kNow - 1'000);
  const std::uint32_t old_one = stamp_of(kNow - 20'000);
  Queue q = note_waiting(Queue{}, fresh_one, kNow);
  q = note_taken(q, fresh_one);
  EXPECT_EQ(q.youngest, 0u);
  EXPECT_EQ(q.grants, 1);
  EXPECT_FALSE(yields(q, old_one, kNow + 10));
  // Another's grant (the open turn) leaves the youngest waiting.
  q = note_waiting(q, fresh_one, kNow + 20);
  EXPECT_EQ(note_taken(q, old_one).youngest, fresh_one);
}

TEST(TokenQueue, EveryFourthTokenGoesToWhoeverAsksFirst) {
  // Under a steady stream of younger waiters the oldest still gets one token in kOpenTurn.
  const std::uint32_t old_one = stamp_of(kNow - 60'000);
  Queue q;
  int to_old = 0;
  for (int i = 0; i < 40; ++i) {
    const std::int64_t now = kNow + i * 100;
    const std::uint32_t fresh_one = stamp_of(now - 500);
    q = note_waiting(q, fresh_one, now);
    const bool old_takes = !yields(q, old_one, now);
    if (old_takes) ++to_old;
    q = note_taken(q, old_takes ? old_one : fresh_one);
  }
  EXPECT_EQ(to_old, 40 / static_cast<int>(kOpenTurn));
}

TEST(TokenQueue, StampsWrapAroundTwoToThe32) {
  // Births either side of a 2^32 ms boundary still order by age.
  const std::int64_t edge = std::int64_t{1} << 32;
  const std::uint32_t before = stamp_of(edge - 3'001);
  const std::uint32_t after = stamp_of(edge + 1'001);
  const Queue q = note_waiting(Queue{}, after, edge + 2'000);
  EXPECT_TRUE(yields(q, before, edge + 2'050));
  // The 24-bit seen stamp wraps too: 100 ms after a wrap of it is still fresh.
  const std::int64_t seen_edge = (std::int64_t{1} << 24) * 1000 - 50;
  const Queue w = note_waiting(Queue{}, stamp_of(seen_edge - 100), seen_edge);
  EXPECT_TRUE(yields(w, stamp_of(seen_edge - 9'000), seen_edge + 100));
}

}  // namespace
}  // namespace curlretry::core::token_queue
