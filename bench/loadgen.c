/* loadgen: the libcurl load generator of curlretry's benchmarks.
 *
 * Plain C against the system libcurl, linked dynamically so that LD_PRELOAD=libcurlretry.so
 * interposes it exactly as it would any unmodified program. Each run prints one line of
 * key=value pairs on stdout (bench/run.sh parses it); diagnostics go to stderr.
 *
 *   loadgen easy  -u URL [-n N] [-w WARMUP] [-t SECONDS]
 *       one easy handle, N sequential GETs (URL set before each): req/s, p50/p99 latency
 *   loadgen multi -u URL [-n N] [-c C] [-w WARMUP] [-t SECONDS] [--fresh]
 *       N GETs, C at a time, one multi handle driven by curl_multi_perform + curl_multi_poll;
 *       a finished easy handle is removed and re-added for the next request (--fresh: cleaned
 *       up and replaced by a new one, the pattern that shows per-handle leaks)
 *   loadgen bulk  -u URL [-n N] [-t SECONDS]
 *       N GETs of a large body on one handle into a write callback that counts bytes: MiB/s
 *   loadgen spawn [-n N] -p LIB -- COMMAND [ARG...]
 *       starts COMMAND 2N times, alternating without and with LD_PRELOAD=LIB (A B A B ...),
 *       stdout and stderr on /dev/null: the median wall time, CPU time and minor page faults of
 *       each
 *   loadgen freeport [COUNT]
 *       prints COUNT distinct free TCP ports on 127.0.0.1 (bound, then released)
 *
 * easy, multi and bulk report, over the measured part, wall seconds, the process's CPU seconds
 * (cpu_s, user + system) and its user CPU seconds alone (user_s).
 *
 * In URLs, "{i}" is replaced by the request's index (warm-up requests get "w<index>"), so each
 * request can name its own flaky-upstream key. A request succeeds when curl says CURLE_OK and
 * the status is 200. Every loop is bounded by the request count and by -t seconds (default
 * 300): past the limit the run stops and says timeout=1. The exit status is 0 when the run
 * completed (whatever the success rate), 1 on a timeout or setup failure, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <curl/curl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct options {
  const char *mode;
  const char *url;
  const char *preload;
  long requests;
  long concurrency;
  long warmup;
  double time_limit;
  int fresh;
  char **command;
};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long max_rss_kib(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
  return usage.ru_maxrss; /* KiB on Linux */
}

/* User + system CPU time this process has used so far, in seconds. */
static double cpu_seconds(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

/* User CPU time alone: its share of the total says how much of a request's cost is user space,
 * where the shim's instructions are (bench/report.py's estimate). */
static double user_seconds(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile (0..1) of n sorted values, nearest rank. */
static double quantile(const double *sorted, long n, double q) {
  if (n <= 0) return 0;
  long rank = (long)(q * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

/* Expands "{i}" in the template; `warm` marks warm-up requests so they never share a key. */
static void make_url(char *out, size_t size, const char *tmpl, long index, int warm) {
  const char *hole = strstr(tmpl, "{i}");
  if (hole == NULL) {
    snprintf(out, size, "%s", tmpl);
    return;
  }
  snprintf(out, size, "%.*s%s%ld%s", (int)(hole - tmpl), tmpl, warm ? "w" : "", index, hole + 3);
}

/* ---------------------------------------------------------------------------------------- */
/* Transfers */

struct sink {
  unsigned long long bytes;
};

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata) {
  (void)data;
  ((struct sink *)userdata)->bytes += size * nmemb;
  return size * nmemb;
}

static CURL *new_handle(struct sink *sink) {
  CURL *easy = curl_easy_init();
  if (easy == NULL) return NULL;
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, sink);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT, 60L);
  return easy;
}

static int succeeded(CURL *easy, CURLcode code) {
  long status = 0;
  if (code != CURLE_OK) return 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  return status == 200;
}

/* `cpu` is the client's own CPU time over the measured part: unlike wall time it hardly moves
 * when other processes compete for the cores, so per-request CPU shows the shim's own cost. */
static void print_common(const struct options *o, long done, long ok, double seconds, double cpu, double user,
                         int timeout, const struct sink *sink) {
  printf("mode=%s requests=%ld ok=%ld fail=%ld success_pct=%.2f seconds=%.6f rps=%.1f cpu_s=%.6f user_s=%.6f "
         "cpu_us_per_req=%.3f bytes=%llu maxrss_kib=%ld timeout=%d",
         o->mode, done, ok, done - ok, done > 0 ? 100.0 * (double)ok / (double)done : 0.0, seconds,
         seconds > 0 ? (double)done / seconds : 0.0, cpu, user, done > 0 ? cpu * 1e6 / (double)done : 0.0,
         sink->bytes, max_rss_kib(), timeout);
}

static int run_easy(const struct options *o, int bulk) {
  struct sink sink = {0};
  char url[2048];
  CURL *easy = new_handle(&sink);
  if (easy == NULL) {
    fprintf(stderr, "loadgen: curl_easy_init failed\n");
    return 1;
  }
  if (bulk) curl_easy_setopt(easy, CURLOPT_TIMEOUT, (long)o->time_limit + 1);
  double *latency = calloc((size_t)o->requests, sizeof *latency);
  if (latency == NULL) return 1;

  double limit = now_seconds() + o->time_limit;
  for (long i = 0; i < o->warmup && now_seconds() < limit; ++i) {
    make_url(url, sizeof url, o->url, i, 1);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_perform(easy);
  }
  sink.bytes = 0;

  long done = 0, ok = 0;
  int timeout = 0;
  double start = now_seconds(), cpu_start = cpu_seconds(), user_start = user_seconds();
  for (long i = 0; i < o->requests; ++i) {
    make_url(url, sizeof url, o->url, i, 0);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    double t0 = now_seconds();
    CURLcode code = curl_easy_perform(easy);
    double t1 = now_seconds();
    latency[done++] = t1 - t0;
    ok += succeeded(easy, code);
    if (t1 > limit) {
      timeout = i + 1 < o->requests;
      break;
    }
  }
  double seconds = now_seconds() - start, cpu = cpu_seconds() - cpu_start, user = user_seconds() - user_start;

  qsort(latency, (size_t)done, sizeof *latency, compare_doubles);
  print_common(o, done, ok, seconds, cpu, user, timeout, &sink);
  if (bulk)
    printf(" mibps=%.1f mib_per_cpu_s=%.1f", seconds > 0 ? (double)sink.bytes / (1024.0 * 1024.0) / seconds : 0.0,
           cpu > 0 ? (double)sink.bytes / (1024.0 * 1024.0) / cpu : 0.0);
  else
    printf(" p50_us=%.1f p99_us=%.1f", quantile(latency, done, 0.50) * 1e6, quantile(latency, done, 0.99) * 1e6);
  printf("\n");
  free(latency);
  curl_easy_cleanup(easy);
  return timeout;
}

static int run_multi(const struct options *o) {
  struct sink sink = {0};
  char url[2048];
  long slots = o->concurrency;
  long total = o->warmup + o->requests; /* warm-up requests first, on the same handles */
  if (slots > total) slots = total;
  CURLM *multi = curl_multi_init();
  CURL **handles = calloc((size_t)slots, sizeof *handles);
  if (multi == NULL || handles == NULL) return 1;
  for (long s = 0; s < slots; ++s) {
    handles[s] = new_handle(&sink);
    if (handles[s] == NULL) return 1;
  }

  long started = 0, finished = 0, done = 0, ok = 0;
  int timeout = 0;
  double limit = now_seconds() + o->time_limit;
  double start = now_seconds(), cpu_start = cpu_seconds(), user_start = user_seconds();
  for (long s = 0; s < slots; ++s) {
    make_url(url, sizeof url, o->url, started < o->warmup ? started : started - o->warmup, started < o->warmup);
    curl_easy_setopt(handles[s], CURLOPT_URL, url);
    curl_multi_add_handle(multi, handles[s]);
    ++started;
  }
  while (finished < total) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK) {
      fprintf(stderr, "loadgen: curl_multi_perform: %s\n", curl_multi_strerror(mc));
      return 1;
    }
    CURLMsg *msg;
    int queued;
    while ((msg = curl_multi_info_read(multi, &queued)) != NULL) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL *easy = msg->easy_handle;
      CURLcode code = msg->data.result;
      int good = succeeded(easy, code);
      curl_multi_remove_handle(multi, easy);
      if (finished < o->warmup) {
        if (finished + 1 == o->warmup) { /* the measured part starts now */
          start = now_seconds();
          cpu_start = cpu_seconds();
          user_start = user_seconds();
          sink.bytes = 0;
        }
      } else {
        ++done;
        ok += good;
      }
      ++finished;
      if (started < total) {
        if (o->fresh) {
          curl_easy_cleanup(easy);
          easy = new_handle(&sink);
          if (easy == NULL) return 1;
        }
        long index = started < o->warmup ? started : started - o->warmup;
        make_url(url, sizeof url, o->url, index, started < o->warmup);
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_multi_add_handle(multi, easy);
        ++started;
      } else {
        curl_easy_cleanup(easy);
      }
    }
    if (finished >= total) break;
    if (now_seconds() > limit) {
      timeout = 1;
      break;
    }
    mc = curl_multi_poll(multi, NULL, 0, 1000, NULL);
    if (mc != CURLM_OK) {
      fprintf(stderr, "loadgen: curl_multi_poll: %s\n", curl_multi_strerror(mc));
      return 1;
    }
  }
  double seconds = now_seconds() - start, cpu = cpu_seconds() - cpu_start, user = user_seconds() - user_start;
  print_common(o, done, ok, seconds, cpu, user, timeout, &sink);
  printf(" concurrency=%ld fresh=%d\n", o->concurrency, o->fresh);
  /* Handles still in flight after a timeout are left to process exit. */
  if (!timeout) curl_multi_cleanup(multi);
  free(handles);
  return timeout;
}

/* ---------------------------------------------------------------------------------------- */
/* Process start */

/* environ without LD_PRELOAD, plus `preload` as LD_PRELOAD when it is not NULL. */
static char **child_environment(const char *preload) {
  size_t n = 0;
  while (environ[n] != NULL) ++n;
  char **env = calloc(n + 2, sizeof *env);
  if (env == NULL) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; ++i)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0) env[k++] = environ[i];
  if (preload != NULL) {
    size_t size = strlen(preload) + 12;
    env[k] = malloc(size);
    if (env[k] == NULL) return NULL;
    snprintf(env[k], size, "LD_PRELOAD=%s", preload);
    ++k;
  }
  env[k] = NULL;
  return env;
}

/* One start-to-exit of the command: wall time, the child's CPU time (seconds) and its minor page
 * faults. False when it could not run or did not exit 0. (Its ru_maxrss would not do: a spawned
 * child inherits the parent's high-water mark across exec.) */
struct start_cost {
  double wall, cpu, faults;
};

static int time_one_start(char **command, char **env, posix_spawn_file_actions_t *actions, struct start_cost *cost) {
  pid_t pid;
  int status = 0;
  struct rusage usage;
  double t0 = now_seconds();
  if (posix_spawnp(&pid, command[0], actions, NULL, command, env) != 0) return 0;
  while (wait4(pid, &status, 0, &usage) < 0)
    if (errno != EINTR) return 0;
  double t1 = now_seconds();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
  cost->wall = t1 - t0;
  cost->cpu = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
              (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  cost->faults = (double)usage.ru_minflt;
  return 1;
}

static int run_spawn(const struct options *o) {
  char **plain = child_environment(NULL);
  char **preloaded = child_environment(o->preload);
  size_t n = (size_t)o->requests;
  /* [variant][wall, cpu, faults][i] */
  double *times[2][3];
  for (int v = 0; v < 2; ++v)
    for (int m = 0; m < 3; ++m)
      if ((times[v][m] = calloc(n, sizeof(double))) == NULL) return 1;
  posix_spawn_file_actions_t actions;
  if (plain == NULL || preloaded == NULL) return 1;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);

  double limit = now_seconds() + o->time_limit;
  long pairs = 0;
  int timeout = 0;
  for (long i = 0; i < o->requests; ++i) {
    /* Alternate which goes first so neither always follows the other. */
    for (int k = 0; k < 2; ++k) {
      int variant = (int)((i + k) % 2);
      struct start_cost cost;
      if (!time_one_start(o->command, variant ? preloaded : plain, &actions, &cost)) {
        fprintf(stderr, "loadgen: %s failed to run%s\n", o->command[0], variant ? " under the preload" : "");
        return 1;
      }
      times[variant][0][i] = cost.wall;
      times[variant][1][i] = cost.cpu;
      times[variant][2][i] = cost.faults;
    }
    ++pairs;
    if (now_seconds() > limit) {
      timeout = i + 1 < o->requests;
      break;
    }
  }
  double med[2][3];
  for (int v = 0; v < 2; ++v)
    for (int m = 0; m < 3; ++m) {
      qsort(times[v][m], (size_t)pairs, sizeof(double), compare_doubles);
      med[v][m] = quantile(times[v][m], pairs, 0.5);
    }
  printf("mode=spawn pairs=%ld base_us=%.1f preload_us=%.1f delta_us=%.1f base_p10_us=%.1f preload_p10_us=%.1f "
         "base_cpu_us=%.1f preload_cpu_us=%.1f delta_cpu_us=%.1f base_minflt=%.0f preload_minflt=%.0f timeout=%d\n",
         pairs, med[0][0] * 1e6, med[1][0] * 1e6, (med[1][0] - med[0][0]) * 1e6,
         quantile(times[0][0], pairs, 0.1) * 1e6,
         quantile(times[1][0], pairs, 0.1) * 1e6, med[0][1] * 1e6, med[1][1] * 1e6, (med[1][1] - med[0][1]) * 1e6,
         med[0][2], med[1][2], timeout);
  posix_spawn_file_actions_destroy(&actions);
  return timeout;
}

/* ---------------------------------------------------------------------------------------- */

static int run_freeport(long count) {
  int fds[64];
  if (count < 1 || count > 64) return 2;
  for (long i = 0; i < count; ++i) {
    struct sockaddr_in addr = {0};
    socklen_t len = sizeof addr;
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fds[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&addr, sizeof addr) != 0 ||
        getsockname(fds[i], (struct sockaddr *)&addr, &len) != 0) {
      perror("loadgen: freeport");
      return 1;
    }
    printf("%s%d", i ? " " : "", ntohs(addr.sin_port));
  }
  printf("\n");
  for (long i = 0; i < count; ++i) close(fds[i]);
  return 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: loadgen easy|multi|bulk -u URL [-n N] [-c C] [-w WARMUP] [-t SECONDS] [--fresh]\n"
          "       loadgen spawn [-n N] -p LIB -- COMMAND [ARG...]\n"
          "       loadgen freeport [COUNT]\n");
}

static int parse_long(const char *text, long *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0) return 0;
  *out = v;
  return 1;
}

int main(int argc, char **argv) {
  struct options o = {0};
  if (argc < 2) {
    usage();
    return 2;
  }
  o.mode = argv[1];
  if (strcmp(o.mode, "freeport") == 0) {
    long count = 1;
    if (argc > 2 && !parse_long(argv[2], &count)) return 2;
    return run_freeport(count);
  }
  o.requests = strcmp(o.mode, "bulk") == 0 ? 1 : 1000;
  o.concurrency = 64;
  o.warmup = strcmp(o.mode, "bulk") == 0 ? 0 : 50;
  o.time_limit = 300;
  for (int i = 2; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    long n;
    if (strcmp(a, "--") == 0) {
      o.command = argv + i + 1;
      break;
    } else if (strcmp(a, "--fresh") == 0) {
      o.fresh = 1;
    } else if (v == NULL) {
      usage();
      return 2;
    } else if (strcmp(a, "-u") == 0) {
      o.url = v, ++i;
    } else if (strcmp(a, "-p") == 0) {
      o.preload = v, ++i;
    } else if (strcmp(a, "-n") == 0 && parse_long(v, &n) && n > 0) {
      o.requests = n, ++i;
    } else if (strcmp(a, "-c") == 0 && parse_long(v, &n) && n > 0) {
      o.concurrency = n, ++i;
    } else if (strcmp(a, "-w") == 0 && parse_long(v, &n)) {
      o.warmup = n, ++i;
    } else if (strcmp(a, "-t") == 0 && parse_long(v, &n) && n > 0) {
      o.time_limit = (double)n, ++i;
    } else {
      usage();
      return 2;
    }
  }

  if (strcmp(o.mode, "spawn") == 0) {
    if (o.preload == NULL || o.command == NULL || o.command[0] == NULL) {
      usage();
      return 2;
    }
    return run_spawn(&o);
  }
  if (o.url == NULL) {
    usage();
    return 2;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
  int rc;
  if (strcmp(o.mode, "easy") == 0)
    rc = run_easy(&o, 0);
  else if (strcmp(o.mode, "bulk") == 0)
    rc = run_easy(&o, 1);
  else if (strcmp(o.mode, "multi") == 0)
    rc = run_multi(&o);
  else {
    usage();
    return 2;
  }
  fflush(stdout);
  curl_global_cleanup();
  return rc;
}
