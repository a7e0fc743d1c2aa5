/* edge_host: ordinary libcurl programs (linked against the system libcurl, no knowledge of
 * curlretry) in the shapes that break preload libraries: many threads, fork() in the middle of a
 * multi loop, a host that closes every descriptor, a host that keeps its own pointer in
 * CURLOPT_PRIVATE. test_edge_hosts.py runs them under LD_PRELOAD=libcurlretry.so.
 *
 * usage: edge_host MODE ORIGIN KEYPREFIX ARGS...
 *   threads ORIGIN KEYPREFIX T N reuse|fresh
 *       T threads x N performs of ORIGIN/s/KEYPREFIX t<i>-<j>/503,200, each thread on handles of
 *       its own (one handle per thread, or a new one per perform); each body must be attempt 2.
 *   fork ORIGIN KEYPREFIX
 *       A multi loop of 8 transfers (503+ram=40,503+ram=40,200) with a thread doing retried
 *       performs alongside; fork() 25 ms into the loop (transfers parked between attempts). The
 *       child runs an easy perform and a multi loop of its own (503,200 each), the parent
 *       finishes its loop. Then 20 more forks while 3 threads keep retrying, each child doing one
 *       retried perform. Every child must finish (alarm-bounded) with the right bodies.
 *   closefds ORIGIN KEYPREFIX DATAFILE after|before
 *       after:  a retried transfer (the shim logs), close_range(3, ~0U), open DATAFILE (it takes
 *               fd 3, where the shim's log descriptor was), another retried transfer.
 *       before: close_range(0, ~0U) before anything was logged, /dev/null on fd 0, DATAFILE.report
 *               on fd 1, DATAFILE on fd 2 (the lowest free), then a retried transfer.
 *       The host writes its own lines into DATAFILE; the test checks no log line landed there.
 *   private ORIGIN KEYPREFIX
 *       CURLOPT_PRIVATE set before, changed between and read back after retried performs (easy,
 *       duphandle, multi with three handles), and read from inside the write callback.
 *
 * Output: on stdout, `ok ...` lines and a final `result=0|1`; broken invariants as
 * `CHECK FAILED: ...` (stdout too: closefds mode may have no stderr). Exit 1 on any failure, 2 on
 * usage errors. Every mode is bounded by alarm().
 */
#define _GNU_SOURCE
#include <curl/curl.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int g_failed = 0;
static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER;

static void say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&g_out);
  vfprintf(stdout, fmt, ap);
  fputc('\n', stdout);
  fflush(stdout);
  pthread_mutex_unlock(&g_out);
  va_end(ap);
}

#define CHECK(cond, ...)                     \
  do {                                       \
    if (!(cond)) {                           \
      say("CHECK FAILED: " __VA_ARGS__);     \
      g_failed = 1;                          \
    }                                        \
  } while (0)

static const char* g_origin;
static const char* g_prefix;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

struct buffer {
  char data[4096];
  size_t len;
};

static size_t write_buffer(char* data, size_t size, size_t nmemb, void* userdata) {
  struct buffer* b = userdata;
  size_t n = size * nmemb;
  if (b->len + n < sizeof b->data) {
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
  }
  return n;
}

static void url_for(char* out, size_t cap, const char* key, const char* script) {
  snprintf(out, cap, "%.200s/s/%.120s%.60s/%.100s", g_origin, g_prefix, key, script);
}

static void ok_body_for(char* out, size_t cap, const char* key, int attempt) {
  snprintf(out, cap, "ok key=%.120s%.60s attempt=%d\n", g_prefix, key, attempt);
}

/* One retried perform on a fresh handle: true when the body is the expected attempt's. */
static int perform_one(const char* key, const char* script, int attempt, char* why, size_t why_cap) {
  char url[512], want[512];
  struct buffer body = {{0}, 0};
  url_for(url, sizeof url, key, script);
  ok_body_for(want, sizeof want, key, attempt);
  CURL* easy = curl_easy_init();
  if (easy == NULL) {
    snprintf(why, why_cap, "curl_easy_init failed");
    return 0;
  }
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT, 20L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_buffer);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
  CURLcode code = curl_easy_perform(easy);
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(easy);
  int good = code == CURLE_OK && status == 200 && strcmp(body.data, want) == 0;
  if (!good) snprintf(why, why_cap, "%s: result=%d status=%ld body=%.200s", key, (int)code, status, body.data);
  return good;
}

/* ------------------------------------------------------------------------------------------ */
/* threads */

struct thread_job {
  int index;
  int count;
  int fresh;
  int ok;
  char first_error[512];
};

static void* thread_main(void* arg) {
  struct thread_job* job = arg;
  CURL* easy = job->fresh ? NULL : curl_easy_init();
  for (int j = 0; j < job->count; ++j) {
    char key[64], url[512], want[512];
    struct buffer body = {{0}, 0};
    snprintf(key, sizeof key, "t%d-%d", job->index, j);
    url_for(url, sizeof url, key, "503,200");
    ok_body_for(want, sizeof want, key, 2);
    CURL* h = job->fresh ? curl_easy_init() : easy;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_buffer);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    CURLcode code = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (code == CURLE_OK && status == 200 && strcmp(body.data, want) == 0) {
      job->ok++;
    } else if (job->first_error[0] == '\0') {
      snprintf(job->first_error, sizeof job->first_error, "%s: result=%d status=%ld body=%.200s", key, (int)code,
               status, body.data);
    }
    if (job->fresh) curl_easy_cleanup(h);
  }
  if (easy) curl_easy_cleanup(easy);
  return NULL;
}

static int mode_threads(int threads, int count, int fresh) {
  alarm(300);
  struct thread_job* jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  double start = now_ms();
  for (int i = 0; i < threads; ++i) {
    jobs[i].index = i;
    jobs[i].count = count;
    jobs[i].fresh = fresh;
    if (pthread_create(&ids[i], NULL, thread_main, &jobs[i]) != 0) {
      say("pthread_create failed");
      return 2;
    }
  }
  int ok = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(ids[i], NULL);
    ok += jobs[i].ok;
    CHECK(jobs[i].ok == count, "thread %d: %d of %d transfers right; first wrong: %s", i, jobs[i].ok, count,
          jobs[i].first_error);
  }
  say("ok threads=%d performs=%d right=%d seconds=%.2f", threads, threads * count, ok, (now_ms() - start) / 1000);
  free(jobs);
  free(ids);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* fork */

struct multi_job {
  char key[64];
  CURL* easy;
  struct buffer body;
  int done;
  int result;
};

/* Runs `n` transfers of `script` through one multi handle (perform + poll). When `fork_at_ms` is
 * >= 0, calls `on_fork` once that many ms into the loop. Returns how many got attempt `attempt`. */
static int multi_loop(const char* label, int n, const char* script, int attempt, double fork_at_ms,
                      void (*on_fork)(void)) {
  struct multi_job jobs[16];
  CURLM* multi = curl_multi_init();
  for (int i = 0; i < n; ++i) {
    char url[512];
    memset(&jobs[i], 0, sizeof jobs[i]);
    snprintf(jobs[i].key, sizeof jobs[i].key, "%s-m%d", label, i);
    url_for(url, sizeof url, jobs[i].key, script);
    jobs[i].easy = curl_easy_init();
    curl_easy_setopt(jobs[i].easy, CURLOPT_URL, url);
    curl_easy_setopt(jobs[i].easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(jobs[i].easy, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(jobs[i].easy, CURLOPT_WRITEFUNCTION, write_buffer);
    curl_easy_setopt(jobs[i].easy, CURLOPT_WRITEDATA, &jobs[i].body);
    curl_easy_setopt(jobs[i].easy, CURLOPT_PRIVATE, (void*)&jobs[i]);
    curl_multi_add_handle(multi, jobs[i].easy);
  }
  double start = now_ms();
  int forked = fork_at_ms < 0;
  int completed = 0;
  int running = 1;
  while (completed < n) {
    curl_multi_perform(multi, &running);
    CURLMsg* msg;
    int left;
    while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
      if (msg->msg != CURLMSG_DONE) continue;
      struct multi_job* job = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char**)&job);
      if (job == NULL) continue;
      job->done++;
      job->result = (int)msg->data.result;
      curl_multi_remove_handle(multi, msg->easy_handle);
      completed++;
    }
    if (!forked && now_ms() - start >= fork_at_ms) {
      forked = 1;
      say("%s: forking %.0f ms into the loop with %d of %d transfers done, running_handles=%d", label,
          now_ms() - start, completed, n, running);
      on_fork();
    }
    if (completed < n) curl_multi_poll(multi, NULL, 0, 100, NULL);
    if (now_ms() - start > 20000) {
      CHECK(0, "%s: multi loop still running after 20 s (%d of %d done)", label, completed, n);
      break;
    }
  }
  int good = 0;
  for (int i = 0; i < n; ++i) {
    char want[512];
    ok_body_for(want, sizeof want, jobs[i].key, attempt);
    if (jobs[i].done == 1 && jobs[i].result == 0 && strcmp(jobs[i].body.data, want) == 0) {
      good++;
    } else {
      CHECK(0, "%s: %s done=%d result=%d body=%.200s", label, jobs[i].key, jobs[i].done, jobs[i].result,
            jobs[i].body.data);
    }
    curl_easy_cleanup(jobs[i].easy);
  }
  curl_multi_cleanup(multi);
  return good;
}

static atomic_int g_stop_background = 0;  /* set by the main thread, read by the background ones */
static int g_background_ok = 0;
static int g_background_bad = 0;

static void* background_main(void* arg) {
  long id = (long)arg;
  for (int j = 0; !g_stop_background; ++j) {
    char key[64], why[512];
    snprintf(key, sizeof key, "bg%ld-%d", id, j);
    if (perform_one(key, "503,200", 2, why, sizeof why)) {
      __sync_fetch_and_add(&g_background_ok, 1);
    } else {
      __sync_fetch_and_add(&g_background_bad, 1);
      say("CHECK FAILED: background %s", why);
    }
  }
  return NULL;
}

static pid_t g_child = -1;

/* In the child of a fork in the middle of the parent's multi loop: transfers of its own. */
static void child_work(void) {
  pthread_mutex_init(&g_out, NULL); /* another thread may have held it at the fork */
  alarm(20);  /* a deadlock in the child ends as SIGALRM, which the parent reports */
  char why[512];
  int ok = perform_one("child-easy", "503,200", 2, why, sizeof why);
  if (!ok) say("CHECK FAILED: child easy %s", why);
  int good = multi_loop("child", 4, "503,200", 2, -1, NULL);
  say("child: easy %s, multi %d of 4 right", ok ? "right" : "wrong", good);
  fflush(stdout);
  _exit(ok && good == 4 && !g_failed ? 0 : 1);
}

static void fork_now(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    say("CHECK FAILED: fork: %s", strerror(errno));
    g_failed = 1;
    return;
  }
  if (pid == 0) child_work();
  g_child = pid;
}

static int wait_child(pid_t pid, const char* what) {
  int status = 0;
  pid_t got;
  while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (got != pid) {
    CHECK(0, "%s: waitpid: %s", what, strerror(errno));
    return 0;
  }
  if (WIFSIGNALED(status)) {
    CHECK(0, "%s: child killed by signal %d%s", what, WTERMSIG(status),
          WTERMSIG(status) == SIGALRM ? " (its 20 s alarm: a deadlock or a stall)" : "");
    return 0;
  }
  CHECK(WEXITSTATUS(status) == 0, "%s: child exit status %d", what, WEXITSTATUS(status));
  return WEXITSTATUS(status) == 0;
}

static int mode_fork(void) {
  alarm(120);
  pthread_t bg[3];
  pthread_create(&bg[0], NULL, background_main, (void*)0L);
  /* The fork lands 25 ms in: the first attempts answered 503 and wait 40 ms, parked. */
  int good = multi_loop("parent", 8, "503+ram=40,503+ram=40,200", 3, 25, fork_now);
  say("parent: multi %d of 8 right", good);
  int child_ok = g_child > 0 && wait_child(g_child, "mid-loop child");
  say("ok fork-mid-loop parent=%d/8 child=%s", good, child_ok ? "right" : "wrong");

  /* Forks while three threads keep the shim busy (its locks taken and released all the time). */
  pthread_create(&bg[1], NULL, background_main, (void*)1L);
  pthread_create(&bg[2], NULL, background_main, (void*)2L);
  int storm_ok = 0;
  /* EDGE_STORM_FORKS: gcc 12's ASan runtime does not hold its allocator lock across fork(), so
   * under ASan a child may deadlock inside malloc no matter what the shim does. */
  const char* forks_env = getenv("EDGE_STORM_FORKS");
  const int storm_forks = forks_env ? atoi(forks_env) : 20;
  for (int i = 0; i < storm_forks; ++i) {
    usleep(5000);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      pthread_mutex_init(&g_out, NULL);
      alarm(20);
      char key[64], why[512];
      snprintf(key, sizeof key, "storm-%d", i);
      int ok = perform_one(key, "503,200", 2, why, sizeof why);
      if (!ok) say("CHECK FAILED: storm child %s", why);
      _exit(ok ? 0 : 1);
    }
    if (pid < 0) {
      CHECK(0, "fork: %s", strerror(errno));
      continue;
    }
    char what[64];
    snprintf(what, sizeof what, "storm child %d", i);
    storm_ok += wait_child(pid, what);
  }
  g_stop_background = 1;
  for (int i = 0; i < 3; ++i) pthread_join(bg[i], NULL);
  say("ok fork-storm children=%d/%d background_right=%d background_wrong=%d", storm_ok, storm_forks, g_background_ok,
      g_background_bad);
  CHECK(good == 8, "parent multi loop: %d of 8 right", good);
  CHECK(g_background_bad == 0, "background transfers wrong: %d", g_background_bad);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* closefds */

static void close_from(unsigned first) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  for (long fd = first; fd < (max > 0 ? max : 65536); ++fd) close((int)fd);
}

static void data_line(int fd, const char* text) {
  size_t n = strlen(text);
  while (n > 0) {
    ssize_t w = write(fd, text, n);
    if (w <= 0) return;
    text += w;
    n -= (size_t)w;
  }
}

static int mode_closefds(const char* data_file, const char* when) {
  alarm(60);
  char why[512];
  int before = strcmp(when, "before") == 0;
  if (!before) {
    int ok = perform_one("first", "503,200", 2, why, sizeof why);
    CHECK(ok, "transfer before closing: %s", why);
    close_from(3);
  } else {
    char report[1024];
    snprintf(report, sizeof report, "%s.report", data_file);
    close_from(0);
    if (open("/dev/null", O_RDONLY) != 0) _exit(3);
    if (freopen(report, "w", stdout) == NULL || fileno(stdout) != 1) _exit(3); /* stdout on fd 1 */
  }
  int fd = open(data_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
  say("data file on fd %d", fd);
  data_line(fd, "host data line 1\n");
  int ok = perform_one("second", "503,503,200", 3, why, sizeof why);
  CHECK(ok, "transfer after closing: %s", why);
  data_line(fd, "host data line 2\n");
  close(fd);
  say("ok closefds-%s transfer=%s", when, ok ? "right" : "wrong");
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* private */

struct private_state {
  CURL* easy;
  void* expected;
  int checked;
  int wrong;
  struct buffer body;
};

static size_t write_checking_private(char* data, size_t size, size_t nmemb, void* userdata) {
  struct private_state* s = userdata;
  void* p = NULL;
  curl_easy_getinfo(s->easy, CURLINFO_PRIVATE, (char**)&p);
  s->checked++;
  if (p != s->expected) s->wrong++;
  return write_buffer(data, size, nmemb, &s->body);
}

static int mode_private(void) {
  alarm(60);
  static int marker_a, marker_b;
  char url[512], want[512];

  /* easy: set, perform with two retries, read back; change, perform again, read back */
  struct private_state s;
  memset(&s, 0, sizeof s);
  CURL* easy = curl_easy_init();
  s.easy = easy;
  s.expected = &marker_a;
  url_for(url, sizeof url, "easy1", "503,503,200");
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, (void*)&marker_a);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_checking_private);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &s);
  CURLcode code = curl_easy_perform(easy);
  void* p = NULL;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char**)&p);
  ok_body_for(want, sizeof want, "easy1", 3);
  CHECK(code == CURLE_OK && strcmp(s.body.data, want) == 0, "easy1: result=%d body=%s", (int)code, s.body.data);
  CHECK(p == &marker_a, "easy1: CURLOPT_PRIVATE reads back %p, set %p", p, (void*)&marker_a);
  CHECK(s.checked > 0 && s.wrong == 0, "easy1: PRIVATE wrong in %d of %d write callbacks", s.wrong, s.checked);

  s.expected = &marker_b;
  s.body.len = 0;
  s.body.data[0] = '\0';
  curl_easy_setopt(easy, CURLOPT_PRIVATE, (void*)&marker_b);
  url_for(url, sizeof url, "easy2", "429+ra=0,200");
  curl_easy_setopt(easy, CURLOPT_URL, url);
  code = curl_easy_perform(easy);
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char**)&p);
  ok_body_for(want, sizeof want, "easy2", 2);
  CHECK(code == CURLE_OK && strcmp(s.body.data, want) == 0, "easy2: result=%d body=%s", (int)code, s.body.data);
  CHECK(p == &marker_b, "easy2: CURLOPT_PRIVATE reads back %p, set %p", p, (void*)&marker_b);

  /* duphandle copies PRIVATE */
  CURL* twin = curl_easy_duphandle(easy);
  struct private_state t;
  memset(&t, 0, sizeof t);
  t.easy = twin;
  t.expected = &marker_b;
  curl_easy_setopt(twin, CURLOPT_WRITEDATA, &t);
  url_for(url, sizeof url, "dup", "503,200");
  curl_easy_setopt(twin, CURLOPT_URL, url);
  code = curl_easy_perform(twin);
  curl_easy_getinfo(twin, CURLINFO_PRIVATE, (char**)&p);
  ok_body_for(want, sizeof want, "dup", 2);
  CHECK(code == CURLE_OK && strcmp(t.body.data, want) == 0, "dup: result=%d body=%s", (int)code, t.body.data);
  CHECK(p == &marker_b, "dup: CURLOPT_PRIVATE reads back %p, the original's %p", p, (void*)&marker_b);
  CHECK(t.wrong == 0, "dup: PRIVATE wrong in %d write callbacks", t.wrong);
  curl_easy_cleanup(twin);
  curl_easy_cleanup(easy);

  /* multi: three handles, PRIVATE read at DONE */
  CURLM* multi = curl_multi_init();
  struct private_state m[3];
  for (int i = 0; i < 3; ++i) {
    char key[32];
    memset(&m[i], 0, sizeof m[i]);
    snprintf(key, sizeof key, "multi%d", i);
    url_for(url, sizeof url, key, i == 2 ? "reset,503,200" : "503,200");
    m[i].easy = curl_easy_init();
    m[i].expected = &m[i];
    curl_easy_setopt(m[i].easy, CURLOPT_URL, url);
    curl_easy_setopt(m[i].easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(m[i].easy, CURLOPT_PRIVATE, (void*)&m[i]);
    curl_easy_setopt(m[i].easy, CURLOPT_WRITEFUNCTION, write_checking_private);
    curl_easy_setopt(m[i].easy, CURLOPT_WRITEDATA, &m[i]);
    curl_multi_add_handle(multi, m[i].easy);
  }
  int done = 0, running = 1;
  double start = now_ms();
  while (done < 3 && now_ms() - start < 20000) {
    curl_multi_perform(multi, &running);
    CURLMsg* msg;
    int left;
    while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
      if (msg->msg != CURLMSG_DONE) continue;
      struct private_state* owner = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char**)&owner);
      int known = owner == &m[0] || owner == &m[1] || owner == &m[2];
      CHECK(known && owner->easy == msg->easy_handle, "multi: PRIVATE %p does not belong to the DONE handle",
            (void*)owner);
      if (known) {
        char key[32];
        snprintf(key, sizeof key, "multi%d", (int)(owner - m));
        ok_body_for(want, sizeof want, key, owner == &m[2] ? 3 : 2);
        CHECK(msg->data.result == CURLE_OK && strcmp(owner->body.data, want) == 0, "%s: result=%d body=%s", key,
              (int)msg->data.result, owner->body.data);
        CHECK(owner->wrong == 0, "%s: PRIVATE wrong in %d write callbacks", key, owner->wrong);
      }
      curl_multi_remove_handle(multi, msg->easy_handle);
      done++;
    }
    if (done < 3) curl_multi_poll(multi, NULL, 0, 100, NULL);
  }
  CHECK(done == 3, "multi: %d of 3 DONE", done);
  for (int i = 0; i < 3; ++i) curl_easy_cleanup(m[i].easy);
  curl_multi_cleanup(multi);
  say("ok private easy=%s multi=%d/3", g_failed ? "wrong" : "right", done);
  return g_failed;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: edge_host threads|fork|closefds|private ORIGIN KEYPREFIX ARGS...\n");
    return 2;
  }
  const char* mode = argv[1];
  g_origin = argv[2];
  g_prefix = argv[3];
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 2;
  if (strcmp(mode, "threads") == 0 && argc == 7) {
    rc = mode_threads(atoi(argv[4]), atoi(argv[5]), strcmp(argv[6], "fresh") == 0);
  } else if (strcmp(mode, "fork") == 0) {
    rc = mode_fork();
  } else if (strcmp(mode, "closefds") == 0 && argc == 6) {
    rc = mode_closefds(argv[4], argv[5]);
  } else if (strcmp(mode, "private") == 0) {
    rc = mode_private();
  } else {
    fprintf(stderr, "bad arguments for mode %s\n", mode);
    return 2;
  }
  say("result=%d", rc);
  return rc;
}
