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
 * the next decision, with its percent. A pending success sent after the host key's cooldown was
 * raised (Redis's clock: the send time travels as an age) ends that cooldown fleet-wide, recorded
 * with `who` for `curlretry fleet`. */
struct curlretry_redis_sync {
  const char* key;      /* "host:port" */
  const char* cred_key; /* "host:port key:xxxxxxxx", or NULL */
  unsigned epoch;       /* the current budget slot (core/retry_budget.h) */
  unsigned slots;       /* slots in the window */
  unsigned add_requests;
  unsigned add_successes;
  unsigned refunds;
  /* Retries this process's machine store let go while Redis did not answer: a token each, taken
   * from the bucket at the next decision, so that the fleet's budget counts them too. */
  unsigned taken;
  int want_retry;
  int again; /* the retry follows a retry that failed (core/retry_tokens.h, kept_back) */
  int percent;
  int reserve;
  long long window_ms;
  long long now_ms;          /* Unix ms, the caller's clock */
  long long success_sent_ms; /* when the latest pending success was sent (caller's clock); 0: none */
  long long born_ms;         /* when the retry's request sent its first attempt (caller's clock); 0: unknown.
                              * A token that is there goes to the youngest request waiting for one
                              * (core/token_queue.h), fleet-wide */
  const char* who;           /* "pid hostname" of the caller, for the record of an ended cooldown */
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
/* Sets the bound of every later command on the connection; 0 on success. Looked up as
 * "curlretry_redis_timeout_v1". */
typedef int (*curlretry_redis_timeout_fn)(curlretry_redis* redis, int timeout_ms);
/* Raises the key's cooldown to until_ms (never lowers it); meta is "status pid hostname". */
typedef int (*curlretry_redis_cool_fn)(curlretry_redis* redis, const char* key, long long until_ms, const char* meta,
                                       char* err, unsigned long err_size);
/* Looked up as "curlretry_redis_sync_v6": a module of another layout is refused, not misread. */
typedef int (*curlretry_redis_sync_fn)(curlretry_redis* redis, struct curlretry_redis_sync* sync, char* err,
                                       unsigned long err_size);

/* Ends the key's cooldown when it was raised before sent_ms (a success of a request sent then;
 * both on the caller's clock, compared on Redis's); *ended is 1 when it did. Looked up as
 * "curlretry_redis_end_v1". */
typedef int (*curlretry_redis_end_fn)(curlretry_redis* redis, const char* key, long long sent_ms, long long now_ms,
                                      const char* who, int* ended, char* err, unsigned long err_size);

/* The fleet's probe of a key that fails outright (core/fleet_probe.h), fleet-wide, on Redis's
 * clock: failed == 0 claims it (*go 1: this retry is the probe, the next no sooner than a spacing
 * from own_ms, doubling within min_ms..max_ms; *go 0: *wait_ms until the next may go); failed
 * == 1 says the probe failed (the next a whole spacing from now). Looked up as
 * "curlretry_redis_probe_v1". */
typedef int (*curlretry_redis_probe_fn)(curlretry_redis* redis, const char* key, long long own_ms, long long min_ms,
                                        long long max_ms, int failed, int* go, long long* wait_ms, char* err,
                                        unsigned long err_size);

/* `curlretry fleet` with a Redis store: one key as the fleet holds it. */
struct curlretry_redis_key {
  const char* key;    /* "host:port" or "host:port key:xxxxxxxx" */
  long long until_ms; /* the cooldown's end, Unix ms; 0 when none */
  /* "status pid hostname set_ms" of whoever set it, then when a success ended it
   * "... ended_ms ended_until_ms pid hostname" (until_ms is then 0); "" when none */
  const char* meta;
  int has_bucket;               /* the key's bucket exists: the fields below are set */
  unsigned long long milli;     /* tokens x 1000 as the last decision left them */
  long long stamp_ms;           /* the bucket's trickle stamp, Unix ms */
  unsigned long long successes; /* successes not credited yet */
  unsigned long long refunds;   /* tokens given back, not credited yet */
  unsigned long long requests;  /* first attempts in the window's slots */
  unsigned long long retries;   /* retries granted in the window's slots */
};
typedef void (*curlretry_redis_key_fn)(void* context, const struct curlretry_redis_key* key);
/* Calls `each` once per key with a cooldown or a bucket (at most 100,000), counting the slots
 * epoch - slots + 1 … epoch. Looked up as "curlretry_redis_list_v1". */
typedef int (*curlretry_redis_list_fn)(curlretry_redis* redis, unsigned epoch, unsigned slots,
                                       curlretry_redis_key_fn each, void* context, char* err, unsigned long err_size);
/* Deletes the key's cooldown, bucket, probe and every budget slot Redis may still keep around `epoch`;
 * *found is 1 when there was something. Looked up as "curlretry_redis_clear_v1". */
typedef int (*curlretry_redis_clear_fn)(curlretry_redis* redis, const char* key, unsigned epoch, int* found, char* err,
                                        unsigned long err_size);

#ifdef __cplusplus
}
#endif
