#include "cli/fleet_redis.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <sstream>

#include "cli/library_path.h"
#include "core/retry_budget.h"
#include "core/retry_tokens.h"
#include "fleet/redis_module_loader.h"

namespace curlretry::cli {
namespace {

// A person waits for this command: longer than the library's 25 or 100 ms (shim/fleet_redis.h), still bounded.
constexpr int kTimeoutMs = 2000;

struct Connection {
  fleet::RedisModule module;
  curlretry_redis* redis = nullptr;
  ~Connection() {
    if (redis != nullptr) module.free(redis);
  }
};

std::unique_ptr<Connection> connect(const config::FleetSettings& settings, std::string& error) {
  const LibraryLookup library = find_library();
  if (!library.path) {
    error = "cannot find the Redis store's module: " + library.error;
    return nullptr;
  }
  const auto slash = library.path->rfind('/');
  auto c = std::make_unique<Connection>();
  c->module = fleet::load_redis_module(library.path->substr(0, slash + 1) + "curlretry-fleet-redis.so");
  if (!c->module.error.empty()) {
    error = c->module.error;
    return nullptr;
  }
  const fleet::RedisEndpoint e = fleet::parse_redis_url(settings.redis_url);
  char why[256] = {};
  c->redis = c->module.connect(e.host.c_str(), e.port, e.db, kTimeoutMs, why, sizeof why);
  if (c->redis == nullptr) {
    error = settings.redis_url + " does not answer: " + why;
    return nullptr;
  }
  return c;
}

struct Collected {
  const config::FleetSettings* settings;
  std::int64_t now_ms;
  std::vector<FleetRow> rows;
};

void collect(void* context, const curlretry_redis_key* k) {
  auto& into = *static_cast<Collected*>(context);
  FleetRow row;
  row.key = k->key;
  row.until_ms = k->until_ms;
  // "status pid host set_ms", then for a cooldown a success ended "ended_ms until_ms pid host"
  // (fleet/redis_module.cpp); a value an older module wrote stops after the host.
  std::istringstream meta(k->meta);
  std::int64_t set_ms = 0;
  meta >> row.status >> row.pid >> row.host >> set_ms;
  if (row.until_ms == 0 && meta >> row.ended_ms >> row.ended_until_ms >> row.ended_pid >> row.ended_host) {
    row.status = 0;  // nothing is cooling: who set the ended one is not shown
    row.pid = 0;
    row.host.clear();
  } else {
    row.ended_ms = row.ended_until_ms = row.ended_pid = 0;
    row.ended_host.clear();
  }
  row.requests = k->requests;
  row.retries = k->retries;
  // The bucket as the next decision would find it, by the same arithmetic (a key with no bucket
  // yet starts full). Refunds not credited yet are whole tokens.
  core::budget::Bucket bucket;
  if (k->has_bucket) {
    const std::uint64_t milli = k->milli + k->refunds * core::budget::kToken;
    bucket.milli =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(milli, std::numeric_limits<std::uint32_t>::max()));
    bucket.stamp = static_cast<std::uint32_t>(k->stamp_ms);
  }
  row.tokens =
      core::budget::refill(bucket, into.settings->budget, into.now_ms, k->has_bucket ? k->successes : 0, k->requests)
          .milli;
  into.rows.push_back(std::move(row));
}

}  // namespace

std::optional<std::vector<FleetRow>> redis_rows(const config::FleetSettings& settings, std::int64_t now_ms,
                                                std::string& error) {
  auto c = connect(settings, error);
  if (!c) return std::nullopt;
  Collected collected{&settings, now_ms, {}};
  char why[256] = {};
  const auto slots = static_cast<unsigned>(core::budget::slots_in(settings.budget.window));
  if (c->module.list(c->redis, core::budget::epoch_of(now_ms), slots, collect, &collected, why, sizeof why) != 0) {
    error = settings.redis_url + ": " + why;
    return std::nullopt;
  }
  return std::move(collected.rows);
}

std::optional<bool> redis_clear(const config::FleetSettings& settings, const std::string& key, std::int64_t now_ms,
                                std::string& error) {
  auto c = connect(settings, error);
  if (!c) return std::nullopt;
  int found = 0;
  char why[256] = {};
  if (c->module.clear(c->redis, key.c_str(), core::budget::epoch_of(now_ms), &found, why, sizeof why) != 0) {
    error = settings.redis_url + ": " + why;
    return std::nullopt;
  }
  return found != 0;
}

}  // namespace curlretry::cli
