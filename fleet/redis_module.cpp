// curlretry-fleet-redis.so: the fleet's Redis store behind the C boundary of redis_abi.h.
// Deadlines only grow and the budget is checked and counted in one Lua script per decision, so
// any number of machines agree without a lock and without one round trip per request.
#include <hiredis/hiredis.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "fleet/redis_abi.h"

struct curlretry_redis {
  redisContext* context;
};

namespace {

constexpr const char* kCoolScript = R"(
local cur = redis.call('GET', KEYS[1])
local old = 0
if cur then old = tonumber(string.match(cur, '^(%d+)')) or 0 end
if tonumber(ARGV[1]) > old then
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'PXAT', ARGV[1])
  return 1
end
return 0
)";

// KEYS: host cooldown, credential cooldown (or the host's again). ARGV: budget prefix, epoch,
// slots, pending requests, want_retry, percent, reserve, then refunds as epoch, count pairs (given
// back while their slot is within the longest window, 128 slots, like the machine store's ring).
// The allowance is the percentage or the reserve, whichever is more (core/retry_budget.h).
constexpr const char* kSyncScript = R"(
local p = ARGV[1]
local e = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local add = tonumber(ARGV[4])
if add > 0 then
  redis.call('HINCRBY', p .. e, 'r', add)
  redis.call('PEXPIRE', p .. e, 70000)
end
for i = 8, #ARGV - 1, 2 do
  local re, rn = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  if re > e - 128 and re <= e then
    local had = tonumber(redis.call('HGET', p .. re, 't')) or 0
    local back = math.min(had, rn)
    if back > 0 then redis.call('HINCRBY', p .. re, 't', -back) end
  end
end
local r, t = 0, 0
for i = 0, n - 1 do
  local v = redis.call('HMGET', p .. (e - i), 'r', 't')
  r = r + (tonumber(v[1]) or 0)
  t = t + (tonumber(v[2]) or 0)
end
local allowed = 0
if tonumber(ARGV[5]) == 1 and t < math.max(math.floor(r * tonumber(ARGV[6]) / 100), tonumber(ARGV[7])) then
  redis.call('HINCRBY', p .. e, 't', 1)
  redis.call('PEXPIRE', p .. e, 70000)
  allowed = 1
  t = t + 1
end
local function until_of(k)
  local v = redis.call('GET', k)
  if not v then return '0' end
  return string.match(v, '^(%d+)') or '0'
end
return {tostring(r), tostring(t), allowed, until_of(KEYS[1]), until_of(KEYS[2])}
)";

void say(char* err, unsigned long size, const std::string& text) {
  if (err != nullptr && size > 0) std::snprintf(err, size, "%s", text.c_str());
}

std::string why(const redisContext* c) {
  return c == nullptr ? "out of memory" : (c->errstr[0] != '\0' ? c->errstr : "connection lost");
}

long long as_number(const redisReply* r) {
  if (r == nullptr) return 0;
  if (r->type == REDIS_REPLY_INTEGER) return r->integer;
  if (r->type == REDIS_REPLY_STRING) return std::strtoll(r->str, nullptr, 10);
  return 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) curlretry_redis* curlretry_redis_connect(const char* host, int port, int db,
                                                                                 int timeout_ms, char* err,
                                                                                 unsigned long err_size) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  redisContext* c = redisConnectWithTimeout(host, port, tv);
  if (c == nullptr || c->err) {
    say(err, err_size, why(c));
    if (c) redisFree(c);
    return nullptr;
  }
  redisSetTimeout(c, tv);
  if (db != 0) {
    auto* reply = static_cast<redisReply*>(redisCommand(c, "SELECT %d", db));
    const bool ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    if (!ok) say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(c));
    if (reply) freeReplyObject(reply);
    if (!ok) {
      redisFree(c);
      return nullptr;
    }
  }
  return new (std::nothrow) curlretry_redis{c};
}

__attribute__((visibility("default"))) void curlretry_redis_free(curlretry_redis* redis) {
  if (redis == nullptr) return;
  redisFree(redis->context);
  delete redis;
}

__attribute__((visibility("default"))) int curlretry_redis_cool(curlretry_redis* redis, const char* key,
                                                               long long until_ms, const char* meta, char* err,
                                                               unsigned long err_size) {
  const std::string k = std::string("curlretry:cool:") + key;
  const std::string until = std::to_string(until_ms);
  auto* reply = static_cast<redisReply*>(
      redisCommand(redis->context, "EVAL %s 1 %s %s %s", kCoolScript, k.c_str(), until.c_str(), meta));
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_INTEGER;
  if (!ok) say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(redis->context));
  if (reply) freeReplyObject(reply);
  return ok ? 0 : -1;
}

__attribute__((visibility("default"))) int curlretry_redis_sync_v2(curlretry_redis* redis, curlretry_redis_sync* s,
                                                                  char* err, unsigned long err_size) {
  const std::string host_key = std::string("curlretry:cool:") + s->key;
  const std::string cred_key = s->cred_key ? std::string("curlretry:cool:") + s->cred_key : host_key;
  const std::string prefix = std::string("curlretry:budget:") + s->key + ":";
  const std::string epoch = std::to_string(s->epoch), slots = std::to_string(s->slots);
  const std::string add = std::to_string(s->add_requests), want = s->want_retry ? "1" : "0";
  const std::string percent = std::to_string(s->percent), reserve = std::to_string(s->reserve);
  std::vector<std::string> words = {"EVAL", kSyncScript, "2", host_key, cred_key, prefix, epoch, slots, add, want,
                                    percent, reserve};
  for (int i = 0; i < CURLRETRY_REDIS_REFUNDS; ++i) {
    if (s->refund_counts[i] == 0) continue;
    words.push_back(std::to_string(s->refund_epochs[i]));
    words.push_back(std::to_string(s->refund_counts[i]));
  }
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(redis->context, static_cast<int>(argv.size()), argv.data(), nullptr));
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 5;
  if (ok) {
    s->requests = static_cast<unsigned long long>(as_number(reply->element[0]));
    s->retries = static_cast<unsigned long long>(as_number(reply->element[1]));
    s->allowed = as_number(reply->element[2]) == 1;
    s->host_until_ms = as_number(reply->element[3]);
    s->cred_until_ms = as_number(reply->element[4]);
  } else {
    say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(redis->context));
  }
  if (reply) freeReplyObject(reply);
  return ok ? 0 : -1;
}

}  // extern "C"
