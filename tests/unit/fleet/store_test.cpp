#include "fleet/store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "core/fleet_key.h"
#include "core/fleet_verdict.h"
#include "store_support.h"
#include "temp_dir.h"

namespace curlretry::fleet {
namespace {

using namespace std::chrono_literals;
using testing::kNow;
using testing::open_store;
using testing::TempDir;

TEST(Store, CreatesAPrivateTable) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  ASSERT_TRUE(store);
  struct stat st {};
  ASSERT_EQ(::stat(store->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), layout::kFileSize);
}

TEST(Store, RefusesADirectoryOpenToOthers) {
  TempDir tmp;
  ASSERT_EQ(::mkdir(tmp.store().c_str(), 0777), 0);
  ASSERT_EQ(::chmod(tmp.store().c_str(), 0777), 0);
  std::string error;
  std::vector<std::string> notes;
  EXPECT_EQ(Store::open(tmp.store(), error, notes), nullptr);
  EXPECT_NE(error.find("is open to others (mode 0777, must be 0700)"), std::string::npos) << error;
}

TEST(Store, CountsRequestsAndRetriesPerKey) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(store->count("a:443", false, kNow + i * 100));
  ASSERT_TRUE(store->count("a:443", true, kNow + 900));
  ASSERT_TRUE(store->count("b:443", false, kNow));
  auto a = store->counts("a:443", kNow + 1000, 10000ms);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->requests, 7u);
  EXPECT_EQ(a->retries, 1u);
  EXPECT_EQ(store->counts("b:443", kNow + 1000, 10000ms)->requests, 1u);
  EXPECT_EQ(store->counts("c:443", kNow, 10000ms), std::nullopt);
}

// The success path's count and credit go through the handle's hint (issue 27): the key's own
// entry, and never another key's or another table's, whatever the hint says.
TEST(Store, AHintCountsAndEarnsWhereTheKeyIsAndNowhereElse) {
  TempDir tmp;
  TempDir other_tmp;
  auto store = open_store(tmp.store());
  auto other = open_store(other_tmp.store());
  const std::uint64_t a = core::fleet_key::hash("a:443");
  const std::uint64_t b = core::fleet_key::hash("b:443");
  layout::Entry* hint = nullptr;
  ASSERT_TRUE(store->count(a, "a:443", false, kNow, hint));
  ASSERT_NE(hint, nullptr);
  layout::Entry* const a_entry = hint;
  ASSERT_TRUE(store->count(a, "a:443", false, kNow + 100, hint));
  EXPECT_EQ(hint, a_entry);
  // Another key through a's entry: its own entry is found (or claimed), a's counts stay.
  layout::Entry* b_hint = a_entry;
  ASSERT_TRUE(store->count(b, "b:443", false, kNow, b_hint));
  EXPECT_NE(b_hint, a_entry);
  // Another table's entry as the hint: this table's own is used.
  layout::Entry* foreign = a_entry;
  ASSERT_TRUE(other->count(a, "a:443", false, kNow, foreign));
  EXPECT_NE(foreign, a_entry);
  EXPECT_EQ(store->counts("a:443", kNow + 200, 10000ms)->requests, 2u);
  EXPECT_EQ(store->counts("b:443", kNow + 200, 10000ms)->requests, 1u);
  EXPECT_EQ(other->counts("a:443", kNow + 200, 10000ms)->requests, 1u);
  // Earning: b's success through a's entry credits b, not a; a's through a nullptr hint, a.
  EXPECT_FALSE(store->earn(b, kNow + 300, a_entry));
  EXPECT_EQ(store->success_sent(a), 0u);
  EXPECT_EQ(store->success_sent(b), static_cast<std::uint32_t>(kNow + 300) | 1u);
  EXPECT_FALSE(store->earn(a, kNow + 400, nullptr));
  EXPECT_EQ(store->success_sent(a), static_cast<std::uint32_t>(kNow + 400) | 1u);
  EXPECT_EQ(other->success_sent(a), 0u);
  // An unknown key: nothing earned, whatever the hint.
  EXPECT_FALSE(store->earn(core::fleet_key::hash("c:443"), kNow, a_entry));
  EXPECT_EQ(store->counts("c:443", kNow, 10000ms), std::nullopt);
}

TEST(Store, CountsLeaveTheWindow) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  store->count("a:443", false, kNow);
  store->count("a:443", false, kNow + 5000);
  EXPECT_EQ(store->counts("a:443", kNow + 9999, 10000ms)->requests, 2u);
  EXPECT_EQ(store->counts("a:443", kNow + 10000, 10000ms)->requests, 1u);
  EXPECT_EQ(store->counts("a:443", kNow + 15000, 10000ms)->requests, 0u);
}

std::uint64_t tokens_of(const Store& store, std::string_view key, std::int64_t now,
                        const core::budget::Budget& budget) {
  for (const auto& v : store.list(now, budget)) {
    if (v.key == key) return v.tokens;
  }
  return ~std::uint64_t{0};
}

TEST(Store, ARetryTakesATokenAndARetryThatSucceededGivesItBack) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const core::budget::Budget budget{0, 64000ms, 2};  // no earning; 2 tokens per 64 s
  const std::uint64_t hash = core::fleet_key::hash("a:443");
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), true);  // a new key starts full
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), true);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), false);
  store->refund(hash);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), true);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), false);
  EXPECT_EQ(store->counts("a:443", kNow, 10000ms)->retries, 3u);  // the retries sent, for the display
  // 32 s later one token has trickled in.
  EXPECT_EQ(tokens_of(*store, "a:443", kNow + 32000, budget), 1000u);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 32000), true);
}

TEST(Store, ATokenThatIsThereGoesToTheYoungestRequestWaiting) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const core::budget::Budget budget{0, 64000ms, 2};  // no earning; 2 tokens per 64 s
  const std::uint64_t hash = core::fleet_key::hash("a:443");
  const std::int64_t old_born = kNow - 20000;
  const std::int64_t fresh_born = kNow - 1000;
  ASSERT_EQ(store->take_retry(hash, "a:443", budget, kNow, false, nullptr, old_born), true);
  ASSERT_EQ(store->take_retry(hash, "a:443", budget, kNow, false, nullptr, old_born), true);
  // Empty: the fresh request waits for the next token, and says so.
  std::optional<core::Millis> eta;
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 10, false, &eta, fresh_born), false);
  EXPECT_EQ(eta, core::Millis{32000});
  store->refund(hash);  // a retry that succeeded gives its token back
  // The old request looks first and is refused with the token there (eta 0: look again soon) ...
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 50, false, &eta, old_born), false);
  EXPECT_EQ(eta, core::Millis{0});
  // ... the fresh one takes it, and then the old one is the youngest that waits.
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 100, false, nullptr, fresh_born), true);
  store->refund(hash);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 150, false, nullptr, old_born), true);
  // A younger waiter that stopped looking (its process ended) holds nothing back after 250 ms.
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 200, false, nullptr, fresh_born), false);
  store->refund(hash);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 300, false, nullptr, old_born), false);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow + 451, false, nullptr, old_born), true);
}

TEST(Store, SuccessesEarnTokensAtTheNextDecision) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const core::budget::Budget budget{50, 64000ms, 0};  // half a token per success, no reserve
  const std::uint64_t hash = core::fleet_key::hash("a:443");
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store->count(hash, "a:443", false, kNow));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), true);  // cap 5
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), false);
  store->earn(hash, kNow);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), false);  // half a token
  store->earn(hash, kNow);
  EXPECT_EQ(tokens_of(*store, "a:443", kNow, budget), 1000u);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), true);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), false);
}

TEST(Store, AKeyFailingOutrightLetsOneRetryAtATimeGoAsTheProbe) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const std::uint64_t hash = core::fleet_key::hash("a:443");
  EXPECT_EQ(store->claim_probe(hash, kNow, 1500ms), std::nullopt);  // unknown key
  ASSERT_TRUE(store->count(hash, "a:443", false, kNow));
  store->note_failure(hash, kNow);
  store->note_failure(hash, kNow + 1500);
  EXPECT_EQ(store->claim_probe(hash, kNow + 2000, 1500ms), std::nullopt);  // a fresh burst: no probe yet
  // An unattended retry's run is old enough at 1 s (core::fleet_probe::kUnattendedAge): it is
  // told when the probe is due (this test's retries below then claim it at 3 s, as any retry).
  EXPECT_FALSE(store->failing_outright(hash, kNow + 2000, core::budget::kOutageAge));
  EXPECT_TRUE(store->failing_outright(hash, kNow + 2000, core::fleet_probe::kUnattendedAge));
  const auto first = store->claim_probe(hash, kNow + 3000, 1500ms);
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->go);
  const auto second = store->claim_probe(hash, kNow + 3001, 1500ms);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->go);
  EXPECT_EQ(second->wait, 1500ms);  // (stamps keep their low bit set: kNow + 3001)
  // The probe fails after 2 s: the next one a whole spacing later; the run goes on across it.
  store->probe_failed(hash, kNow + 5000);
  store->note_failure(hash, kNow + 5000);
  EXPECT_EQ(store->claim_probe(hash, kNow + 6000, 1500ms)->wait, 500ms);
  const auto third = store->claim_probe(hash, kNow + 6500, 1500ms);
  ASSERT_TRUE(third && third->go);
  EXPECT_EQ(third->next.gap, 3000u);
  store->note_failure(hash, kNow + 9400);  // 4.4 s without a failure: within the probes' spacing, the same run
  EXPECT_EQ(store->run(hash).began, static_cast<std::uint32_t>(kNow) | 1u);
  // A success sent since the run began ends the outage: no probe, the budget decides again.
  store->earn(hash, kNow + 9500);
  EXPECT_EQ(store->claim_probe(hash, kNow + 9600, 1500ms), std::nullopt);
  ASSERT_TRUE(store->clear("a:443"));
  EXPECT_EQ(store->probe(hash).next_at, 0u);
}

TEST(Store, ADueProbeGoesToTheYoungestRequestWaitingForItWithAnOpenTurnForTheOthers) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const std::uint64_t hash = core::fleet_key::hash("a:443");
  ASSERT_TRUE(store->count(hash, "a:443", false, kNow));
  store->note_failure(hash, kNow);
  store->note_failure(hash, kNow + 1500);
  const std::int64_t old_born = kNow;
  const std::int64_t young_born = kNow + 2000;
  // The first probe goes (nobody younger waits: grant 1), due again at kNow + 4500.
  const auto first = store->claim_probe(hash, kNow + 3000, 1500ms, old_born);
  ASSERT_TRUE(first && first->go);
  store->note_failure(hash, kNow + 3100);
  // The young request looks 100 ms before it is due and waits; the older one looks first once it
  // is due and leaves it to the younger, which takes it at its next look (grant 2, spacing 3 s).
  const auto young = store->claim_probe(hash, kNow + 4400, 1500ms, young_born);
  ASSERT_TRUE(young);
  EXPECT_EQ(young->wait, 100ms);
  const auto older = store->claim_probe(hash, kNow + 4500, 1500ms, old_born);
  ASSERT_TRUE(older);
  EXPECT_FALSE(older->go);
  EXPECT_EQ(older->wait, core::fleet_verdict::kTokenPoll);
  const auto taken = store->claim_probe(hash, kNow + 4550, 1500ms, young_born);
  ASSERT_TRUE(taken && taken->go);
  // The younger took it: nobody younger waits, the older retry takes the next one (grant 3).
  store->note_failure(hash, kNow + 4600);
  const auto third = store->claim_probe(hash, kNow + 7600, 1500ms, old_born);
  ASSERT_TRUE(third && third->go);
  // Every kOpenTurn-th probe goes to whoever looks first: the older one, a younger waiting or not.
  store->note_failure(hash, kNow + 7700);
  const auto waiting = store->claim_probe(hash, kNow + 13500, 1500ms, young_born);
  ASSERT_TRUE(waiting && !waiting->go);
  const auto open = store->claim_probe(hash, kNow + 13600, 1500ms, old_born);
  ASSERT_TRUE(open && open->go);
}

TEST(Store, EarningOrRefundingForAnUnknownKeyChangesNothing) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const std::uint64_t hash = core::fleet_key::hash("a:443");
  store->earn(hash, kNow);
  store->refund(hash);
  EXPECT_EQ(store->counts("a:443", kNow, 10000ms), std::nullopt);
  EXPECT_TRUE(store->list(kNow, core::budget::Budget{}).empty());
}

TEST(Store, ClearForgetsTheBucket) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const core::budget::Budget budget{0, 64000ms, 1};
  const std::uint64_t hash = core::fleet_key::hash("a:443");
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), true);
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), false);
  ASSERT_TRUE(store->clear("a:443"));
  EXPECT_EQ(store->take_retry(hash, "a:443", budget, kNow), true);
}

TEST(Store, CooldownOnlyGrows) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  ASSERT_TRUE(store->cool("a:443", kNow + 5000, 503, kNow));
  ASSERT_TRUE(store->cool("a:443", kNow + 2000, 429, kNow));
  Cooling c = store->cooling("a:443", kNow);
  EXPECT_EQ(c.until_ms, kNow + 5000);
  EXPECT_EQ(c.status, 503);
  EXPECT_EQ(c.pid, ::getpid());
  ASSERT_TRUE(store->cool("a:443", kNow + 8000, 529, kNow + 10));
  EXPECT_EQ(store->cooling("a:443", kNow).until_ms, kNow + 8000);
  EXPECT_EQ(store->cooling("a:443", kNow).status, 529);
  EXPECT_EQ(store->cooling("unknown:80", kNow).until_ms, 0);
}

TEST(Store, ACooldownBeyondADayIsTakenForCorruption) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  store->cool("a:443", kNow + 25LL * 3600 * 1000, 503, kNow);
  EXPECT_EQ(store->cooling("a:443", kNow).until_ms, 0);
}

TEST(Store, SharedBetweenTwoOpens) {
  TempDir tmp;
  auto one = open_store(tmp.store());
  auto two = open_store(tmp.store());
  one->cool("a:443", kNow + 3000, 429, kNow);
  one->count("a:443", false, kNow);
  EXPECT_EQ(two->cooling("a:443", kNow).until_ms, kNow + 3000);
  EXPECT_EQ(two->counts("a:443", kNow, 10000ms)->requests, 1u);
}

TEST(Store, ListAndClear) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  store->cool("a:443 key:0badf00d", kNow + 3000, 429, kNow);
  store->count("b:80", false, kNow);
  auto keys = store->list(kNow, core::budget::Budget{});
  ASSERT_EQ(keys.size(), 2u);
  std::sort(keys.begin(), keys.end(), [](const KeyView& x, const KeyView& y) { return x.key < y.key; });
  EXPECT_EQ(keys[0].key, "a:443 key:0badf00d");
  EXPECT_EQ(keys[0].cooling.until_ms, kNow + 3000);
  EXPECT_EQ(keys[1].key, "b:80");
  EXPECT_EQ(keys[1].counts.requests, 1u);
  EXPECT_TRUE(store->clear("a:443 key:0badf00d"));
  EXPECT_EQ(store->cooling("a:443 key:0badf00d", kNow).until_ms, 0);
  EXPECT_FALSE(store->clear("nope:1"));
}

TEST(Store, LongKeysAreTruncatedForDisplayOnly) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  const std::string longer(100, 'h');
  store->cool(longer, kNow + 1000, 503, kNow);
  EXPECT_EQ(store->cooling(longer, kNow).until_ms, kNow + 1000);
  EXPECT_EQ(store->list(kNow, core::budget::Budget{}).at(0).key, longer.substr(0, 64));
}

void overwrite(const std::string& path, off_t at, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), at), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

TEST(Store, ACorruptHeaderIsRebuiltWithANote) {
  TempDir tmp;
  std::string path;
  {
    auto store = open_store(tmp.store());
    store->cool("a:443", kNow + 3000, 503, kNow);
    path = store->path();
  }
  overwrite(path, 0, std::string(64, '\xff'));
  std::vector<std::string> notes;
  auto store = open_store(tmp.store(), &notes);
  ASSERT_TRUE(store);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "rebuilt the fleet table " + path + " (it is not a complete curlretry table)");
  EXPECT_EQ(store->cooling("a:443", kNow).until_ms, 0);
  store->count("a:443", false, kNow);
  EXPECT_EQ(store->counts("a:443", kNow, 10000ms)->requests, 1u);
}

TEST(Store, ATruncatedFileIsRebuilt) {
  TempDir tmp;
  std::string path = open_store(tmp.store())->path();
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  std::vector<std::string> notes;
  auto store = open_store(tmp.store(), &notes);
  ASSERT_TRUE(store);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("its size is 100 bytes"), std::string::npos) << notes[0];
}

TEST(Store, AFileOpenToOthersIsRebuiltPrivate) {
  TempDir tmp;
  std::string path = open_store(tmp.store())->path();
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  std::vector<std::string> notes;
  auto store = open_store(tmp.store(), &notes);
  ASSERT_EQ(notes.size(), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(Store, AForeignFileIsRebuilt) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  TempDir tmp;
  std::string path = open_store(tmp.store())->path();
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  std::vector<std::string> notes;
  auto store = open_store(tmp.store(), &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("it belongs to uid 65534"), std::string::npos) << notes[0];
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::getuid());
}

TEST(Store, ASymlinkInPlaceOfTheTableIsReplaced) {
  TempDir tmp;
  std::string path = open_store(tmp.store())->path();
  const std::string target = tmp.path() + "/elsewhere";
  std::ofstream(target) << "precious";
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  std::vector<std::string> notes;
  auto store = open_store(tmp.store(), &notes);
  ASSERT_TRUE(store);
  std::ifstream in(target);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "precious");
}

TEST(Store, OpenExistingNeverCreates) {
  TempDir tmp;
  std::string error;
  EXPECT_EQ(Store::open_existing(tmp.store(), error), nullptr);
  EXPECT_EQ(error, "no fleet table at " + tmp.store() + "/table-v3");
}

TEST(Store, AFullTableSaysSo) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  int accepted = 0;
  bool refused = false;
  for (int i = 0; i < 2000 && !refused; ++i) {
    if (store->count("host" + std::to_string(i) + ":80", false, kNow))
      ++accepted;
    else
      refused = true;
  }
  EXPECT_TRUE(refused);
  EXPECT_GE(accepted, static_cast<int>(layout::kEntries) / 2);
  EXPECT_LE(accepted, static_cast<int>(layout::kEntries));
}

TEST(Store, StaleEntriesAreReused) {
  TempDir tmp;
  auto store = open_store(tmp.store());
  std::string refused;
  for (int i = 0; i < 2000 && refused.empty(); ++i) {
    const std::string key = "host" + std::to_string(i) + ":80";
    if (!store->count(key, false, kNow)) refused = key;
  }
  ASSERT_FALSE(refused.empty());
  EXPECT_FALSE(store->count(refused, false, kNow + 1000));
  // Long after every window, the old keys' entries are free for new ones.
  const std::int64_t later = kNow + 2 * core::budget::kMaxWindow.count();
  EXPECT_TRUE(store->count(refused, false, later));
  EXPECT_EQ(store->counts(refused, later, 10000ms)->requests, 1u);
}

}  // namespace
}  // namespace curlretry::fleet
