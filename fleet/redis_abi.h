/* The C boundary of curlretry-fleet-redis.so, the Redis store's module. The preload library
 * loads it (RTLD_LOCAL, from its own directory) only when a redis:// store is configured, so no
 * other host maps hiredis. Plain C types only: no memory or exception crosses the boundary. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct curlretry_redis curlretry_redis;

/* One round trip for a retry decision: adds the caller's pending requests to the current budget
 * slot and its pending successes and refunds (retries that succeeded) to the key's token bucket,
 * then (want_retry) credits, trickles and caps the bucket (core/retry_tokens.h) and takes the
 * retry's token when there is one, atomically for the whole fleet; reads both cooldowns. With
 * want_retry 0 (a flush) only the pending counts are added: successes are turned into tokens by
 * the next decision, with its percent. */
struct curlretry_redis_sync {
  const char* key;       /* "host:port" */
  const char* cred_key;  /* "host:port key:xxxxxxxx", or NULL */
  unsigned epoch;        /* the current budget slot (core/retry_budget.h) */
  unsigned slots;        /* slots in the window */
  unsigned add_requests;
  unsigned add_successes;
  unsigned refunds;
  int want_retry;
  int again;             /* the retry follows a retry that failed (core/retry_tokens.h, kept_back) */
  int percent;
  int reserve;
  long long window_ms;
  long long now_ms;      /* Unix ms, the caller's clock */
  /* out */
  long long host_until_ms;
  long long cred_until_ms;
  unsigned long long requests;
  unsigned long long tokens; /* thousandths of a retry, after the decision */
  int allowed;
};

/* NULL on failure, with a sentence in err. timeout_ms bounds the connect and every command. */
typedef curlretry_redis* (*curlretry_redis_connect_fn)(const char* host, int port, int db, int timeout_ms, char* err,
                                                       unsigned long err_size);
typedef void (*curlretry_redis_free_fn)(curlretry_redis* redis);
/* Raises the key's cooldown to until_ms (never lowers it); meta is "status pid hostname". */
typedef int (*curlretry_redis_cool_fn)(curlretry_redis* redis, const char* key, long long until_ms, const char* meta,
                                       char* err, unsigned long err_size);
/* Looked up as "curlretry_redis_sync_v3": a module of another layout is refused, not misread. */
typedef int (*curlretry_redis_sync_fn)(curlretry_redis* redis, struct curlretry_redis_sync* sync, char* err,
                                       unsigned long err_size);

#ifdef __cplusplus
}
#endif
