// The machine store's file, byte for byte: a header and a fixed table of entries, every field a
// lock-free atomic so that any number of processes can update it with no lock to be left held
// by a crash. Changing anything here means a new kVersion (old files are then rebuilt).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/retry_budget.h"
#include "core/retry_tokens.h"

namespace curlretry::fleet::layout {

inline constexpr std::uint64_t kMagic = 0x31544c4652524355ULL;  // "UCRRFLT1" little-endian
// 2: the budget is a token bucket (core/retry_tokens.h); 3: a cooldown ends on a success
inline constexpr std::uint32_t kVersion = 3;
inline constexpr std::uint32_t kEntries = 512;
inline constexpr std::uint32_t kMaxProbe = 32;  // linear probing stops here: the table is "full"
inline constexpr std::size_t kNameWords = 8;    // 64 bytes of key text, for `curlretry fleet`
// A new name with each layout: processes of an older curlretry still running on the machine keep
// their own table instead of rebuilding this one (and it theirs) back and forth.
inline constexpr const char* kFileName = "table-v3";

struct alignas(64) Header {
  std::atomic<std::uint64_t> magic;  // stored last, with release, when the file is complete
  std::uint32_t version;
  std::uint32_t entries;
  std::uint32_t entry_size;
  std::uint32_t slots;
  std::uint32_t slot_ms;
  std::uint32_t reserved;
  std::atomic<std::uint64_t> created_ms;
};

struct alignas(64) Entry {
  std::atomic<std::uint64_t> hash;                // 0 = free; claimed by CAS
  std::atomic<std::uint64_t> name[kNameWords];    // key text, NUL padded (display only)
  std::atomic<std::int64_t> cool_until_ms;        // Unix ms; the server's latest word; 0 once ended
  std::atomic<std::int64_t> cool_set_ms;          // when it was last raised
  std::atomic<std::uint32_t> cool_status;         // the status that raised it
  std::atomic<std::uint32_t> cool_pid;            // the process that raised it
  std::atomic<std::uint32_t> last_epoch;          // newest budget slot interval written
  std::atomic<std::uint32_t> cred_cooling;        // a credential key of this host was cooled
  std::atomic<std::int64_t> cool_ended_ms;        // when a success ended the last cooldown (display)
  std::atomic<std::int64_t> cool_ended_until_ms;  // the deadline it had then (display)
  std::atomic<std::uint32_t> cool_end_pid;        // the process whose success ended it (display)
  std::atomic<std::uint32_t> success_sent;        // Unix ms (mod 2^32) the latest success was sent
  std::atomic<std::uint64_t> bucket;              // core::budget::Bucket, packed
  std::atomic<std::uint64_t> mark;                // core::budget::Mark, packed: successes credited
  std::atomic<std::uint64_t> earned;              // successful transfers, a running count
  std::atomic<std::uint64_t> ring[core::budget::kSlots];
  // Appended in the entry's padding (its size and every offset above unchanged: still layout v3;
  // an older process never writes them, a new file has them zero): the key's failing run.
  std::atomic<std::uint32_t> run_began;  // core::budget::FailingRun::began
  std::atomic<std::uint32_t> run_last;   // core::budget::FailingRun::last
  // Appended the same way: the fleet's probe while the key fails outright (core/fleet_probe.h).
  std::atomic<std::uint64_t> probe;  // core::fleet_probe::Probe, packed; claimed by CAS
  // Appended the same way: who of the retries waiting for a token takes one (core/token_queue.h).
  std::atomic<std::uint64_t> queue;  // core::token_queue::Queue, packed
};
// The entry's size is the layout: the run, probe and queue words above fit the padding an alignas(64)
// entry had (16 bytes of it are left).
static_assert(sizeof(Entry) == 1216, "the v3 entry's size and offsets must not change");

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the store needs lock-free 64-bit atomics");
static_assert(std::atomic<std::int64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint64_t>) == 8, "atomics must be plain words in shared memory");

inline constexpr std::size_t kFileSize = sizeof(Header) + sizeof(Entry) * kEntries;

}  // namespace curlretry::fleet::layout
