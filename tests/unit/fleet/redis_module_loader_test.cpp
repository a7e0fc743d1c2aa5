#include "fleet/redis_module_loader.h"

#include <gtest/gtest.h>

namespace curlretry::fleet {
namespace {

void expect(const RedisEndpoint& e, const std::string& host, int port, int db) {
  EXPECT_EQ(e.host, host);
  EXPECT_EQ(e.port, port);
  EXPECT_EQ(e.db, db);
}

TEST(RedisUrl, HostPortAndDb) {
  expect(parse_redis_url("redis://127.0.0.1:6380/2"), "127.0.0.1", 6380, 2);
  expect(parse_redis_url("redis://cache.internal"), "cache.internal", 6379, 0);
  expect(parse_redis_url("redis://cache.internal/"), "cache.internal", 6379, 0);
}

// The shim's own parser (before this one) took "[::1]:6380" as the host, port 6379.
TEST(RedisUrl, BracketedIpv6HostWithAndWithoutPort) {
  expect(parse_redis_url("redis://[::1]:6380/1"), "::1", 6380, 1);
  expect(parse_redis_url("redis://[::1]/3"), "::1", 6379, 3);
}

TEST(RedisModule, AMissingFileIsASentenceNamingIt) {
  const RedisModule m = load_redis_module("/nonexistent/curlretry-fleet-redis.so");
  EXPECT_NE(m.error.find("cannot load the Redis store /nonexistent/curlretry-fleet-redis.so"), std::string::npos)
      << m.error;
  EXPECT_EQ(m.connect, nullptr);
}

}  // namespace
}  // namespace curlretry::fleet
