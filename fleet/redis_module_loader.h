// Finding the Redis store: the endpoint a redis:// URL names, and the entry points of
// curlretry-fleet-redis.so (the only code that links hiredis). The preload library and
// `curlretry fleet` load the same module, so both speak to Redis through the same scripts.
#pragma once

#include <string>
#include <string_view>

#include "fleet/redis_abi.h"

namespace curlretry::fleet {

struct RedisEndpoint {
  std::string host;
  int port = 6379;
  int db = 0;
};
// "redis://host[:port][/db]", IPv6 hosts in brackets (validated by config).
RedisEndpoint parse_redis_url(std::string_view url);

struct RedisModule {
  curlretry_redis_connect_fn connect = nullptr;
  curlretry_redis_free_fn free = nullptr;
  curlretry_redis_timeout_fn timeout = nullptr;
  curlretry_redis_cool_fn cool = nullptr;
  curlretry_redis_sync_fn sync = nullptr;
  curlretry_redis_end_fn end = nullptr;
  curlretry_redis_list_fn list = nullptr;
  curlretry_redis_clear_fn clear = nullptr;
  curlretry_redis_probe_fn probe = nullptr;
  std::string error;  // a sentence naming the file when it cannot be used; empty when it can
};
// dlopen(RTLD_LOCAL) of the module at `path`; a module of another layout (an entry point
// missing) is refused, not misread. The handle is never closed: its functions stay in use.
RedisModule load_redis_module(const std::string& path);

}  // namespace curlretry::fleet
