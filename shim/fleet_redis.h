// The link from this process to a Redis fleet store (fleet.store: redis://host:port/db), through
// the module curlretry-fleet-redis.so loaded beside this library on first use. It never blocks a
// success and never fails a transfer: a busy link, a slow or dead server (Wait's bound at most)
// means "decide with the machine store", said once; the connection is tried again 2 s later.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fleet/redis_abi.h"
#include "fleet/redis_module_loader.h"

namespace curlretry::shim::fleet_redis {

// Who waits for a round trip, and so how long it may take. A host's event loop (a multi handle,
// where every transfer of the loop stalls with it), a success being delivered, or a process's
// exit: 25 ms. A retry the host's own thread is already waiting for inside curl_easy_perform:
// 100 ms, a small part of its backoff; on a busy machine (100 processes on 2 vCPUs, bench/fleet.sh)
// Redis misses 25 ms thousands of times a minute, and every miss decides with this machine's
// store alone for 2 s. (The kernel rounds a socket timeout up to its tick: 25 ms waits 30-32 ms
// on the project's machine, 100 ms 104 ms.)
enum class Wait { loop, thread };

class Link {
 public:
  explicit Link(std::string url);
  // Counts a request made by this process, to be added to the fleet at the next sync of its key
  // or at exit (atomics only; a key that does not fit the small pending table is not counted).
  void note_request(std::uint64_t key_hash, std::string_view key);
  // A transfer to the key, sent at `sent_ms` (Unix ms), succeeded: its credit, and the evidence
  // that ends the key's cooldown in Redis when it was raised before then. Sent with the next sync
  // of the key or at exit (atomics only), or at once (one bounded round trip) when this process
  // knows the key is cooling in Redis: it raised the cooldown or a sync told it.
  void note_success(std::uint64_t key_hash, std::int64_t sent_ms);
  // A retry whose token Redis gave succeeded: the token goes back with the next sync or at exit.
  void note_refund(std::uint64_t key_hash);
  // A retry this machine's store let go while Redis did not answer: its token is taken from the
  // fleet's bucket with the next sync or at exit, so a silent Redis is no second source of tokens
  // (a retry of it that succeeds gives that token back, note_refund).
  void note_taken(std::uint64_t key_hash, std::string_view key);
  // One decision's round trip (see redis_abi.h); nullopt: use the machine store this time.
  std::optional<curlretry_redis_sync> sync(curlretry_redis_sync request, std::uint64_t key_hash, Wait wait);
  // Sends what this process still has pending (registered with atexit by link_for).
  void flush_at_exit();
  // The fleet's probe of a key that fails outright (curlretry_redis_probe_v1): claimed (go, or
  // how long until the next), or `failed` (the probe failed: pushed out); nullopt: no answer, the
  // machine store decides.
  struct Probe {
    bool go = false;
    std::int64_t wait_ms = 0;
  };
  std::optional<Probe> probe(const std::string& key, std::int64_t own_ms, bool failed, Wait wait);
  // Raises a cooldown fleet-wide; false when Redis cannot be reached now.
  bool cool(const std::string& key, std::int64_t until_ms, int status, Wait wait);
  // Ends `key`'s cooldown fleet-wide when it was raised before `sent_ms` (a success of a request
  // sent then): one bounded round trip, for a key the caller knows is cooling (a credential's).
  void end_cooling(const std::string& key, std::int64_t sent_ms);

 private:
  struct Guard;
  // With the lock held: connected (connecting if due), its commands bounded as `wait` allows.
  // Quiet: nothing logged (at exit).
  bool usable(std::int64_t now_ms, Wait wait, bool quiet = false);
  void drop(const char* what, const char* why, bool quiet = false);
  // The key's pending slot; claimed (and named) when `key` is given, else only found.
  int pending_slot(std::uint64_t key_hash, std::string_view key);
  void take_pending(std::uint64_t key_hash, curlretry_redis_sync& request);
  void take_slot(std::size_t slot, curlretry_redis_sync& request);

  std::string url_;
  fleet::RedisEndpoint endpoint_;
};

// The process's link, or nullptr when the store is not a Redis URL.
Link* link_for(const std::string& url);

}  // namespace curlretry::shim::fleet_redis
