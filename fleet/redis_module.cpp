// curlretry-fleet-redis.so: the fleet's Redis store behind the C boundary of redis_abi.h.
// Deadlines only grow and the budget is checked and counted in one Lua script per decision, so
// any number of machines agree without a lock and without one round trip per request.
#include <hiredis/hiredis.h>
#include <openssl/evp.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "fleet/redis_abi.h"

struct curlretry_redis {
  redisContext* context;
  // EVALSHA was refused for another reason than NOSCRIPT (an ACL or a renamed command that lets
  // EVAL through) and EVAL then worked: this connection sends the scripts' bodies from then on.
  bool eval_only = false;
};

namespace {

// Redis's own clock in ms: when a cooldown was raised and when a success was sent are compared on
// it, so machines whose clocks differ a little still agree which came first. (Writes after TIME
// need effect replication, the default since Redis 5; asked for explicitly on older ones.)
#define CURLRETRY_LUA_CLOCK                                           \
  "if redis.replicate_commands then redis.replicate_commands() end\n" \
  "local tm = redis.call('TIME')\n"                                   \
  "local clock = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)\n"

// A cooldown's value: "until_ms status pid hostname set_ms" (until on the setter's clock, set on
// Redis's). A success ends it as "0 status pid hostname set_ms ended_ms until_ms pid hostname",
// kept an hour for `curlretry fleet`; every reader takes the leading number as the deadline.
// finish(key, sent, now, who): sent on Redis's clock; ends the cooldown when it was raised at or
// before `sent` and has not run out.
#define CURLRETRY_LUA_FINISH                                                                                 \
  "local function finish(key, sent, now, who)\n"                                                             \
  "  local cur = redis.call('GET', key)\n"                                                                   \
  "  if not cur then return 0 end\n"                                                                         \
  "  local f = {}\n"                                                                                         \
  "  for w in string.gmatch(cur, '%S+') do f[#f + 1] = w end\n"                                              \
  "  local u, set = tonumber(f[1]) or 0, tonumber(f[5])\n"                                                   \
  "  if u <= now or not set or set > sent or #f ~= 5 then return 0 end\n"                                    \
  "  redis.call('SET', key, table.concat({'0', f[2], f[3], f[4], f[5], now, u, who}, ' '), 'PX', 3600000)\n" \
  "  return 1\n"                                                                                             \
  "end\n"

constexpr const char* kCoolScript = CURLRETRY_LUA_CLOCK R"(
local cur = redis.call('GET', KEYS[1])
local old = 0
if cur then old = tonumber(string.match(cur, '^(%d+)')) or 0 end
if tonumber(ARGV[1]) > old then
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. clock, 'PXAT', ARGV[1])
  return 1
end
return 0
)";

// KEYS: the cooldown. ARGV: sent_ms, now_ms (the caller's clock), who ("pid hostname").
constexpr const char* kEndScript = CURLRETRY_LUA_CLOCK CURLRETRY_LUA_FINISH R"(
local age = math.max(tonumber(ARGV[2]) - tonumber(ARGV[1]), 0)
return finish(KEYS[1], clock - age, tonumber(ARGV[2]), ARGV[3])
)";

// KEYS: host cooldown, credential cooldown (or the host's again). ARGV: budget prefix, epoch,
// slots, pending requests, pending successes, refunds, want_retry, percent, reserve, window_ms,
// now_ms, again, success_sent_ms (0: none), who, born_ms (0: unknown), taken. The bucket (hash
// <prefix>bucket: m tokens x 1000, s trickle stamp, k failing streak, w successes and g refunds
// not credited yet, x retries let go by a machine store while Redis did not answer, not charged
// yet) follows core/retry_tokens.cpp step for step, and its waiters (y the youngest
// waiting request's birth on its caller's clock, z when it last looked on Redis's, c grants mod
// 256) core/token_queue.cpp.
constexpr const char* kSyncScript = CURLRETRY_LUA_CLOCK CURLRETRY_LUA_FINISH R"(
local p = ARGV[1]
local e = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local add, succ, back = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local want, pct, res = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local win, now = math.max(tonumber(ARGV[10]), 1), tonumber(ARGV[11])
local again = tonumber(ARGV[12])
local sent = tonumber(ARGV[13])
local b = p .. 'bucket'
if sent > 0 then finish(KEYS[1], clock - math.max(now - sent, 0), now, ARGV[14]) end
if add > 0 then
  redis.call('HINCRBY', p .. e, 'r', add)
  redis.call('PEXPIRE', p .. e, 70000)
end
if succ > 0 then
  redis.call('HINCRBY', b, 'w', succ)
  redis.call('HSET', b, 'k', 0)
end
if back > 0 then redis.call('HINCRBY', b, 'g', back) end
local took = tonumber(ARGV[16]) or 0
if took > 0 then
  redis.call('HINCRBY', b, 'x', took)
  redis.call('HINCRBY', p .. e, 't', took)
  redis.call('PEXPIRE', p .. e, 70000)
end
redis.call('PEXPIRE', b, 600000)
local r = 0
for i = 0, n - 1 do
  r = r + (tonumber(redis.call('HGET', p .. (e - i), 'r')) or 0)
end
local v = redis.call('HMGET', b, 'm', 's', 'k', 'w', 'g', 'y', 'z', 'c', 'x')
local m, s, k = tonumber(v[1]), tonumber(v[2]), tonumber(v[3]) or 0
local born = tonumber(ARGV[15]) or 0
local y, z, c = tonumber(v[6]) or 0, tonumber(v[7]) or 0, tonumber(v[8]) or 0
local waits = y > 0 and clock - z < 250
local allowed = 0
if want == 1 then
  local cap = math.max(res * 1000, pct * r * 10)
  if not m then
    m, s = cap, now
  else
    local el = now - s
    if el <= 0 or res <= 0 then
      s = now
    else
      local ms = math.min(el, win)
      local t = math.floor(res * 1000 * ms / win)
      if el >= win then
        s = now
      else
        s = s + math.min(math.ceil(t * win / (res * 1000)), ms)
      end
      m = m + t
    end
    m = m + (tonumber(v[5]) or 0) * 1000
  end
  m = math.max(m - (tonumber(v[9]) or 0) * 1000, 0)
  m = math.min(m + (tonumber(v[4]) or 0) * pct * 10, cap)
  if (tonumber(v[4]) or 0) > 0 then k = 0 else k = k + 1 end
  local kept = 0
  if (k >= 3 or again == 1) and cap > res * 1000 then kept = math.min(res * 1000, cap - res * 1000) end
  local yields = c % 4 ~= 3 and waits and y > born
  if m >= 1000 + kept and not yields then
    m = m - 1000
    allowed = 1
    c = (c + 1) % 256
    if y == born then y = 0 end
    redis.call('HINCRBY', p .. e, 't', 1)
    redis.call('PEXPIRE', p .. e, 70000)
  elseif born > 0 and (not waits or born >= y) then
    y, z = born, clock
  end
  redis.call('HSET', b, 'm', m, 's', s, 'k', k, 'w', 0, 'g', 0, 'y', y, 'z', z, 'c', c, 'x', 0)
end
local function until_of(key)
  local u = redis.call('GET', key)
  if not u then return '0' end
  return string.match(u, '^(%d+)') or '0'
end
return {tostring(r), tostring(m or 0), allowed, until_of(KEYS[1]), until_of(KEYS[2])}
)";

// One key's view for `curlretry fleet`. KEYS: cooldown, bucket. ARGV: budget prefix, epoch, slots.
constexpr const char* kViewScript = R"(
local cool = redis.call('GET', KEYS[1]) or ''
local v = redis.call('HMGET', KEYS[2], 'm', 's', 'w', 'g', 'x')
local e, n = tonumber(ARGV[2]), tonumber(ARGV[3])
local r, t = 0, 0
for i = 0, n - 1 do
  local c = redis.call('HMGET', ARGV[1] .. (e - i), 'r', 't')
  r = r + (tonumber(c[1]) or 0)
  t = t + (tonumber(c[2]) or 0)
end
local has = 0
if v[1] then has = 1 end
-- The bucket less the retries not charged yet, as the next decision takes them (before it
-- credits the successes).
local m = v[1] or '0'
if v[1] and tonumber(v[5] or 0) > 0 then m = tostring(math.max(tonumber(v[1]) - tonumber(v[5]) * 1000, 0)) end
return {cool, has, m, v[2] or '0', v[3] or '0', v[4] or '0', tostring(r), tostring(t)}
)";

// The probe (core/fleet_probe.cpp step for step, on Redis's clock). KEYS: the probe hash (n: next
// probe at, g: spacing). ARGV: own_ms, min_ms, max_ms, failed. A series untouched for three times
// the cap (the hash's expiry) starts again from the retry's own backoff: Redis keeps no failing
// run, the caller's machine store says whether the key fails outright. Returns {go, wait_ms}.
constexpr const char* kProbeScript = CURLRETRY_LUA_CLOCK R"(
local own, lo, hi = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 'n', 'g')
local n, g = tonumber(v[1]), tonumber(v[2])
if ARGV[4] == '1' then
  g = g or lo
  if not n or clock + g > n then n = clock + g end
  redis.call('HSET', KEYS[1], 'n', n, 'g', g)
  redis.call('PEXPIRE', KEYS[1], 3 * hi)
  return {1, 0}
end
if n and n > clock and n - clock <= hi then return {0, n - clock} end
local prev = 0
if n and g then prev = g end
local gap = math.min(math.max(own, 2 * prev, lo), hi)
redis.call('HSET', KEYS[1], 'n', clock + gap, 'g', gap)
redis.call('PEXPIRE', KEYS[1], 3 * hi)
return {1, 0}
)";

// KEYS: cooldown, bucket, probe. ARGV: budget prefix, epoch, how many slots back (every slot the
// PEXPIRE in kSyncScript may still keep, plus two ahead for a clock a little in front).
constexpr const char* kClearScript = R"(
local gone = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
local e, n = tonumber(ARGV[2]), tonumber(ARGV[3])
for i = -2, n do gone = gone + redis.call('DEL', ARGV[1] .. (e - i)) end
return gone
)";

constexpr const char* kCoolPrefix = "curlretry:cool:";
constexpr const char* kBudgetPrefix = "curlretry:budget:";
constexpr const char* kBucketSuffix = ":bucket";
constexpr const char* kProbeSuffix = ":probe";
constexpr std::size_t kMaxListed = 100000;
// Slots kSyncScript's PEXPIRE (70 s) keeps at 500 ms each, and a few more.
constexpr unsigned kSlotsKept = 150;

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

// A Lua script sent by its SHA1 (EVALSHA), as Redis clients do: Redis keeps every script it has
// run, so a sync writes ~330 bytes instead of ~3.4 KB (strace, a curl retry), and Redis does not hash
// the body again on every call. A server that has not seen it yet (just started, restarted, after
// SCRIPT FLUSH) answers NOSCRIPT, and that one call goes again as EVAL, which caches the script:
// two round trips, each within the socket's bound, once per script and server start.
class Script {
 public:
  constexpr explicit Script(const char* body) : body_(body) {}
  const char* body() const { return body_; }
  // The body's SHA1 in lowercase hex, computed once; "" where it cannot be (a libcrypto whose
  // policy refuses SHA1): the script then always goes as EVAL.
  const char* sha() const {
    std::call_once(once_, [this] {
      unsigned char digest[EVP_MAX_MD_SIZE];
      unsigned int size = 0;
      if (EVP_Digest(body_, std::strlen(body_), digest, &size, EVP_sha1(), nullptr) != 1 || size != 20) return;
      for (unsigned int i = 0; i < size; ++i) std::snprintf(sha_ + 2 * i, 3, "%02x", digest[i]);
    });
    return sha_;
  }

 private:
  const char* body_;
  mutable std::once_flag once_;
  mutable char sha_[41] = {};
};

// Runs `script` with argv[2..argc) (numkeys, keys, args): argv[0] and argv[1] are filled here.
// Any error answer to EVALSHA sends the body (EVAL gives the script's own error again, if that is
// what it was); one that is not NOSCRIPT, with EVAL then answered, marks the connection eval_only.
redisReply* run(curlretry_redis* redis, const Script& script, int argc, const char** argv) {
  redisContext* c = redis->context;
  bool refused = false;
  if (const char* sha = script.sha(); sha[0] != '\0' && !redis->eval_only) {
    argv[0] = "EVALSHA";
    argv[1] = sha;
    auto* reply = static_cast<redisReply*>(redisCommandArgv(c, argc, argv, nullptr));
    if (reply == nullptr || reply->type != REDIS_REPLY_ERROR) return reply;
    refused = std::strncmp(reply->str, "NOSCRIPT", 8) != 0;
    freeReplyObject(reply);
  }
  argv[0] = "EVAL";
  argv[1] = script.body();
  auto* reply = static_cast<redisReply*>(redisCommandArgv(c, argc, argv, nullptr));
  if (refused && reply != nullptr && reply->type != REDIS_REPLY_ERROR) redis->eval_only = true;
  return reply;
}

constinit const Script kCool{kCoolScript};
constinit const Script kEnd{kEndScript};
constinit const Script kSync{kSyncScript};
constinit const Script kView{kViewScript};
constinit const Script kProbe{kProbeScript};
constinit const Script kClear{kClearScript};

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
  return new (std::nothrow) curlretry_redis{c, false};
}

__attribute__((visibility("default"))) void curlretry_redis_free(curlretry_redis* redis) {
  if (redis == nullptr) return;
  redisFree(redis->context);
  delete redis;
}

__attribute__((visibility("default"))) int curlretry_redis_timeout_v1(curlretry_redis* redis, int timeout_ms) {
  const timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  return redisSetTimeout(redis->context, tv) == REDIS_OK ? 0 : -1;
}

__attribute__((visibility("default"))) int curlretry_redis_cool(curlretry_redis* redis, const char* key,
                                                                long long until_ms, const char* meta, char* err,
                                                                unsigned long err_size) {
  const std::string k = kCoolPrefix + std::string(key);
  const std::string until = std::to_string(until_ms);
  const char* argv[] = {nullptr, nullptr, "1", k.c_str(), until.c_str(), meta};
  auto* reply = run(redis, kCool, 6, argv);
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_INTEGER;
  if (!ok) say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(redis->context));
  if (reply) freeReplyObject(reply);
  return ok ? 0 : -1;
}

__attribute__((visibility("default"))) int curlretry_redis_end_v1(curlretry_redis* redis, const char* key,
                                                                  long long sent_ms, long long now_ms, const char* who,
                                                                  int* ended, char* err, unsigned long err_size) {
  const std::string k = kCoolPrefix + std::string(key);
  const std::string sent = std::to_string(sent_ms);
  const std::string now = std::to_string(now_ms);
  const char* argv[] = {nullptr, nullptr, "1", k.c_str(), sent.c_str(), now.c_str(), who != nullptr ? who : "0 ?"};
  auto* reply = run(redis, kEnd, 7, argv);
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_INTEGER;
  if (ok) {
    if (ended != nullptr) *ended = reply->integer == 1;
  } else {
    say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(redis->context));
  }
  if (reply) freeReplyObject(reply);
  return ok ? 0 : -1;
}

__attribute__((visibility("default"))) int curlretry_redis_sync_v6(curlretry_redis* redis, curlretry_redis_sync* s,
                                                                   char* err, unsigned long err_size) {
  const std::string host_key = kCoolPrefix + std::string(s->key);
  const std::string cred_key = s->cred_key ? kCoolPrefix + std::string(s->cred_key) : host_key;
  const std::string prefix = kBudgetPrefix + std::string(s->key) + ":";
  const std::vector<std::string> words = {"2",
                                          host_key,
                                          cred_key,
                                          prefix,
                                          std::to_string(s->epoch),
                                          std::to_string(s->slots),
                                          std::to_string(s->add_requests),
                                          std::to_string(s->add_successes),
                                          std::to_string(s->refunds),
                                          s->want_retry ? "1" : "0",
                                          std::to_string(s->percent),
                                          std::to_string(s->reserve),
                                          std::to_string(s->window_ms),
                                          std::to_string(s->now_ms),
                                          s->again ? "1" : "0",
                                          std::to_string(s->success_sent_ms),
                                          s->who != nullptr ? s->who : "0 ?",
                                          std::to_string(s->born_ms),
                                          std::to_string(s->taken)};
  std::vector<const char*> argv = {nullptr, nullptr};  // the command and the script: run() fills them
  for (const auto& w : words) argv.push_back(w.c_str());
  auto* reply = run(redis, kSync, static_cast<int>(argv.size()), argv.data());
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 5;
  if (ok) {
    s->requests = static_cast<unsigned long long>(as_number(reply->element[0]));
    s->tokens = static_cast<unsigned long long>(as_number(reply->element[1]));
    s->allowed = as_number(reply->element[2]) == 1;
    s->host_until_ms = as_number(reply->element[3]);
    s->cred_until_ms = as_number(reply->element[4]);
  } else {
    say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(redis->context));
  }
  if (reply) freeReplyObject(reply);
  return ok ? 0 : -1;
}

__attribute__((visibility("default"))) int curlretry_redis_list_v1(curlretry_redis* redis, unsigned epoch,
                                                                   unsigned slots, curlretry_redis_key_fn each,
                                                                   void* context, char* err, unsigned long err_size) {
  redisContext* c = redis->context;
  // SCAN may return a key twice; the set also sorts them.
  std::set<std::string> keys;
  const auto scan = [&](const char* pattern, const std::string& prefix, const std::string& suffix) {
    std::string cursor = "0";
    do {
      auto* reply = static_cast<redisReply*>(redisCommand(c, "SCAN %s MATCH %s COUNT 1000", cursor.c_str(), pattern));
      const bool ok = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
                      reply->element[0]->type == REDIS_REPLY_STRING && reply->element[1]->type == REDIS_REPLY_ARRAY;
      if (!ok) {
        say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(c));
        if (reply) freeReplyObject(reply);
        return false;
      }
      cursor = reply->element[0]->str;
      for (std::size_t i = 0; i < reply->element[1]->elements && keys.size() < kMaxListed; ++i) {
        const redisReply* name = reply->element[1]->element[i];
        if (name->type != REDIS_REPLY_STRING) continue;
        std::string k(name->str, name->len);
        if (k.size() < prefix.size() + suffix.size() + 1 || k.compare(0, prefix.size(), prefix) != 0 ||
            k.compare(k.size() - suffix.size(), suffix.size(), suffix) != 0) {
          continue;
        }
        keys.insert(k.substr(prefix.size(), k.size() - prefix.size() - suffix.size()));
      }
      freeReplyObject(reply);
    } while (cursor != "0" && keys.size() < kMaxListed);
    return true;
  };
  if (!scan("curlretry:cool:*", kCoolPrefix, "") || !scan("curlretry:budget:*:bucket", kBudgetPrefix, kBucketSuffix)) {
    return -1;
  }
  for (const std::string& key : keys) {
    const std::string cool = kCoolPrefix + key;
    const std::string bucket = kBudgetPrefix + key + kBucketSuffix;
    const std::string prefix = kBudgetPrefix + key + ":";
    const std::string e = std::to_string(epoch);
    const std::string n = std::to_string(slots);
    const char* argv[] = {nullptr, nullptr, "2", cool.c_str(), bucket.c_str(), prefix.c_str(), e.c_str(), n.c_str()};
    auto* reply = run(redis, kView, 8, argv);
    const bool ok = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 8;
    if (!ok) {
      say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(c));
      if (reply) freeReplyObject(reply);
      return -1;
    }
    // The cooldown's value is "until_ms meta" (kCoolScript, CURLRETRY_LUA_FINISH).
    const redisReply* value = reply->element[0];
    const std::string text = value->type == REDIS_REPLY_STRING ? std::string(value->str, value->len) : "";
    const auto space = text.find(' ');
    const std::string meta = space == std::string::npos ? "" : text.substr(space + 1);
    curlretry_redis_key view{};
    view.key = key.c_str();
    view.until_ms = std::strtoll(text.c_str(), nullptr, 10);
    view.meta = meta.c_str();
    view.has_bucket = as_number(reply->element[1]) == 1;
    view.milli = static_cast<unsigned long long>(as_number(reply->element[2]));
    view.stamp_ms = as_number(reply->element[3]);
    view.successes = static_cast<unsigned long long>(as_number(reply->element[4]));
    view.refunds = static_cast<unsigned long long>(as_number(reply->element[5]));
    view.requests = static_cast<unsigned long long>(as_number(reply->element[6]));
    view.retries = static_cast<unsigned long long>(as_number(reply->element[7]));
    freeReplyObject(reply);
    each(context, &view);
  }
  return 0;
}

__attribute__((visibility("default"))) int curlretry_redis_clear_v1(curlretry_redis* redis, const char* key,
                                                                    unsigned epoch, int* found, char* err,
                                                                    unsigned long err_size) {
  const std::string cool = kCoolPrefix + std::string(key);
  const std::string bucket = kBudgetPrefix + std::string(key) + kBucketSuffix;
  const std::string probe = kBudgetPrefix + std::string(key) + kProbeSuffix;
  const std::string prefix = kBudgetPrefix + std::string(key) + ":";
  const std::string e = std::to_string(epoch);
  const std::string n = std::to_string(kSlotsKept);
  const char* argv[] = {nullptr,       nullptr,        "3",       cool.c_str(), bucket.c_str(),
                        probe.c_str(), prefix.c_str(), e.c_str(), n.c_str()};
  auto* reply = run(redis, kClear, 9, argv);
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_INTEGER;
  if (ok) {
    *found = reply->integer > 0;
  } else {
    say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(redis->context));
  }
  if (reply) freeReplyObject(reply);
  return ok ? 0 : -1;
}

__attribute__((visibility("default"))) int curlretry_redis_probe_v1(curlretry_redis* redis, const char* key,
                                                                    long long own_ms, long long min_ms,
                                                                    long long max_ms, int failed, int* go,
                                                                    long long* wait_ms, char* err,
                                                                    unsigned long err_size) {
  const std::string probe = kBudgetPrefix + std::string(key) + kProbeSuffix;
  const std::string own = std::to_string(own_ms), lo = std::to_string(min_ms), hi = std::to_string(max_ms);
  const char* argv[] = {nullptr, nullptr, "1", probe.c_str(), own.c_str(), lo.c_str(), hi.c_str(), failed ? "1" : "0"};
  auto* reply = run(redis, kProbe, 8, argv);
  const bool ok = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2;
  if (ok) {
    if (go != nullptr) *go = as_number(reply->element[0]) == 1;
    if (wait_ms != nullptr) *wait_ms = as_number(reply->element[1]);
  } else {
    say(err, err_size, reply && reply->type == REDIS_REPLY_ERROR ? reply->str : why(redis->context));
  }
  if (reply) freeReplyObject(reply);
  return ok ? 0 : -1;
}

}  // extern "C"
