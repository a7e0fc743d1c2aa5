// The per-thread memory of the shim's handle lookups (shim/remembered_lookup.h): an answer is
// reused only while the table's epoch is the one it was found under; a loop over a multi handle's
// 16 transfers in turn finds them without the table's lock once each has been looked up; a key
// never gets another key's answer, whatever shares its slot.
#include "shim/remembered_lookup.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>

namespace {

using curlretry::shim::remembered_find;
using curlretry::shim::RememberedLookup;

// Heap blocks the size of libcurl's easy handles (a few KiB apart), as the registry's keys are.
struct Handle {
  char bytes[5872];
};

struct Table {
  std::mutex mutex;
  std::atomic<std::uint64_t> epoch{1};
  int finds = 0;  // lookups that took the lock
};

template <std::size_t Spare>
int value_of(RememberedLookup<const Handle*, int, Spare>& last, Table& table, const std::array<Handle, 16>& handles,
             const Handle* key) {
  return remembered_find(last, table.epoch, table.mutex, key, [&](const Handle* k) {
    ++table.finds;
    return static_cast<int>(k - handles.data());
  });
}

TEST(RememberedLookup, LatestAnswerAloneServesARunOfCallsOnOneHandle) {
  static std::array<Handle, 16> handles;
  RememberedLookup<const Handle*, int> last;
  Table table;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(value_of(last, table, handles, &handles[3]), 3);
  EXPECT_EQ(table.finds, 1);
  // Switching handles with no spare answers: every switch takes the lock.
  for (int round = 0; round < 3; ++round)
    for (int h = 0; h < 16; ++h) EXPECT_EQ(value_of(last, table, handles, &handles[h]), h);
  EXPECT_EQ(table.finds, 1 + 3 * 16);
}

TEST(RememberedLookup, SpareAnswersServeALoopOverSixteenHandles) {
  static std::array<Handle, 16> handles;
  RememberedLookup<const Handle*, int, 32> last;
  Table table;
  for (int h = 0; h < 16; ++h) EXPECT_EQ(value_of(last, table, handles, &handles[h]), h);
  EXPECT_EQ(table.finds, 16);
  // Keys that share a spare slot with another one push each other out; the others stay.
  std::set<std::size_t> slots;
  for (const Handle& h : handles) slots.insert(&RememberedLookup<const Handle*, int, 32>::spare_for(last, &h) - last.spare.data());
  const int sharing = 16 - static_cast<int>(slots.size());
  for (int round = 0; round < 3; ++round)
    for (int h = 0; h < 16; ++h) EXPECT_EQ(value_of(last, table, handles, &handles[h]), h);
  EXPECT_LE(table.finds, 16 + 3 * 2 * sharing);
  EXPECT_LT(table.finds, 16 + 3 * 16) << "the spare answers served none of the loop";
}

TEST(RememberedLookup, AnEpochBumpForgetsEveryAnswer) {
  static std::array<Handle, 16> handles;
  RememberedLookup<const Handle*, int, 32> last;
  Table table;
  for (int h = 0; h < 16; ++h) value_of(last, table, handles, &handles[h]);
  table.epoch.fetch_add(1);  // a handle was added or removed: any answer may be stale
  table.finds = 0;
  for (int h = 0; h < 16; ++h) EXPECT_EQ(value_of(last, table, handles, &handles[h]), h);
  EXPECT_EQ(table.finds, 16);
}

TEST(RememberedLookup, AKeySharingASlotNeverGetsAnotherKeysAnswer) {
  // Two spare slots for 16 keys: most keys share one; every answer must still be the key's own.
  static std::array<Handle, 16> handles;
  RememberedLookup<const Handle*, int, 2> last;
  Table table;
  for (int round = 0; round < 4; ++round)
    for (int h = 0; h < 16; ++h) ASSERT_EQ(value_of(last, table, handles, &handles[(h * 7 + round) % 16]), (h * 7 + round) % 16);
}

}  // namespace
