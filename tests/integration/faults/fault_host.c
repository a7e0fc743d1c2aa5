/* fault_host: an ordinary libcurl multi-interface program (no knowledge of curlretry) that runs a
 * list of transfers for the differential fault-injection test (test_fault_injection.py), with
 * up to CONCURRENCY of them in flight, and reports exactly what its callbacks saw.
 *
 * usage: fault_host perform|socket JOBFILE CONCURRENCY WATCHDOG_SECONDS
 *   perform  curl_multi_perform + curl_multi_poll
 *   socket   curl_multi_socket_action driven by epoll and the multi timer callback
 *
 * JOBFILE: one transfer per line, three to five tab-separated fields:
 *   URL <TAB> get|postfields|seek|noseek <TAB> UPLOAD_FILE or - [<TAB> TIMEOUT_MS [<TAB> noheaders]]
 *     get         a plain GET
 *     postfields  POST with CURLOPT_COPYPOSTFIELDS (libcurl re-sends it itself)
 *     seek        POST through a read callback, with a seek callback
 *     noseek      POST through a read callback only (a replay needs the shim's own copy)
 *     noheaders   no header callback at all (the host reads only the body and the status)
 *
 * Every handle has CURLOPT_FORBID_REUSE (each request on a connection of its own, so libcurl
 * never silently re-sends a request on a reused connection that died: the upstream's request
 * count is then exactly what the retry policy did), CURLOPT_TIMEOUT_MS (the job's, default
 * 20000) and CURLOPT_PRIVATE pointing at its record.
 *
 * Report on stdout, one record per transfer in input order:
 *   @@T <index> result=<CURLcode|-1> status=<http> errno=<os errno> done=<DONE messages> hlen=<n> blen=<n>\n
 *   <hlen bytes the header callback saw><blen bytes the write callback saw>\n
 * Broken invariants (a second DONE for a handle, a DONE for a handle not in flight, PRIVATE not
 * ours, a loop that stalls with transfers outstanding) are printed on stderr as
 * `CHECK FAILED: ...` and make the exit status 1. Exit 2: usage or setup error. The process
 * kills itself (SIGALRM) after WATCHDOG_SECONDS.
 */
#define _GNU_SOURCE
#include <curl/curl.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "host_support.h"

static int g_failed = 0;



enum mode { MODE_GET, MODE_POSTFIELDS, MODE_SEEK, MODE_NOSEEK };

struct job {
  size_t index;
  char* url;
  enum mode mode;
  struct buffer upload;
  size_t upload_pos;
  CURL* easy;
  struct buffer headers;
  struct buffer body;
  int done;
  int result;
  long status;
  long os_errno; /* CURLINFO_OS_ERRNO at DONE: what a reset, a broken pipe or a refusal was */
  int in_flight;
  long timeout_ms;
  int no_headers;
};

static struct job* g_jobs;
static size_t g_njobs;
static size_t g_next;
static size_t g_completed;
static size_t g_in_flight;
static CURLM* g_multi;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void read_file(const char* path, struct buffer* out) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
    exit(2);
  }
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buffer_append(out, chunk, n);
  fclose(f);
}

static void load_jobs(const char* path) {
  FILE* f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
    exit(2);
  }
  size_t cap = 0;
  char* line = NULL;
  size_t line_cap = 0;
  ssize_t got;
  while ((got = getline(&line, &line_cap, f)) > 0) {
    if (line[got - 1] == '\n') line[--got] = '\0';
    if (got == 0) continue;
    char* url = strtok(line, "\t");
    char* mode = strtok(NULL, "\t");
    char* file = strtok(NULL, "\t");
    char* timeout = strtok(NULL, "\t");
    char* headers = timeout ? strtok(NULL, "\t") : NULL;
    if (url == NULL || mode == NULL || file == NULL) {
      fprintf(stderr, "bad job line %zu\n", g_njobs + 1);
      exit(2);
    }
    if (g_njobs == cap) {
      cap = cap ? cap * 2 : 64;
      g_jobs = realloc(g_jobs, cap * sizeof *g_jobs);
      if (g_jobs == NULL) exit(2);
    }
    struct job* j = &g_jobs[g_njobs];
    memset(j, 0, sizeof *j);
    j->index = g_njobs++;
    j->url = strdup(url);
    j->result = -1;
    j->timeout_ms = timeout ? atol(timeout) : 20000;
    if (headers != NULL && strcmp(headers, "noheaders") != 0) {
      fprintf(stderr, "bad job line %zu: fifth field '%s'\n", g_njobs, headers);
      exit(2);
    }
    j->no_headers = headers != NULL;
    if (strcmp(mode, "get") == 0) j->mode = MODE_GET;
    else if (strcmp(mode, "postfields") == 0) j->mode = MODE_POSTFIELDS;
    else if (strcmp(mode, "seek") == 0) j->mode = MODE_SEEK;
    else if (strcmp(mode, "noseek") == 0) j->mode = MODE_NOSEEK;
    else {
      fprintf(stderr, "unknown mode %s\n", mode);
      exit(2);
    }
    if (j->mode != MODE_GET) read_file(file, &j->upload);
  }
  free(line);
  fclose(f);
}

static size_t on_body(char* data, size_t size, size_t nmemb, void* userdata) {
  struct job* j = userdata;
  CHECK(j->in_flight, "write callback for transfer %zu, which is not in flight", j->index);
  buffer_append(&j->body, data, size * nmemb);
  return size * nmemb;
}

static size_t on_header(char* data, size_t size, size_t nmemb, void* userdata) {
  struct job* j = userdata;
  CHECK(j->in_flight, "header callback for transfer %zu, which is not in flight", j->index);
  buffer_append(&j->headers, data, size * nmemb);
  return size * nmemb;
}

static size_t on_read(char* buffer, size_t size, size_t nitems, void* userdata) {
  struct job* j = userdata;
  size_t left = j->upload.len - j->upload_pos;
  size_t n = size * nitems < left ? size * nitems : left;
  memcpy(buffer, j->upload.data + j->upload_pos, n);
  j->upload_pos += n;
  return n;
}

static int on_seek(void* userdata, curl_off_t offset, int origin) {
  struct job* j = userdata;
  if (origin != SEEK_SET || offset < 0 || (size_t)offset > j->upload.len) return CURL_SEEKFUNC_FAIL;
  j->upload_pos = (size_t)offset;
  return CURL_SEEKFUNC_OK;
}

static void add_job(struct job* j) {
  CURL* easy = curl_easy_init();
  if (easy == NULL) {
    fprintf(stderr, "curl_easy_init failed\n");
    exit(2);
  }
  j->easy = easy;
  curl_easy_setopt(easy, CURLOPT_URL, j->url);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, j->timeout_ms);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, (void*)j);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void*)j);
  if (!j->no_headers) {
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, (void*)j);
  }
  switch (j->mode) {
    case MODE_GET: break;
    case MODE_POSTFIELDS:
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->upload.len);
      curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, j->upload.len ? j->upload.data : "");
      break;
    case MODE_SEEK:
      curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, on_seek);
      curl_easy_setopt(easy, CURLOPT_SEEKDATA, (void*)j);
      /* fall through */
    case MODE_NOSEEK:
      curl_easy_setopt(easy, CURLOPT_POST, 1L);
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->upload.len);
      curl_easy_setopt(easy, CURLOPT_READFUNCTION, on_read);
      curl_easy_setopt(easy, CURLOPT_READDATA, (void*)j);
      break;
  }
  j->in_flight = 1;
  g_in_flight++;
  CURLMcode rc = curl_multi_add_handle(g_multi, easy);
  CHECK(rc == CURLM_OK, "curl_multi_add_handle(%zu) = %d", j->index, (int)rc);
}

static void add_more(size_t concurrency) {
  while (g_next < g_njobs && g_in_flight < concurrency) add_job(&g_jobs[g_next++]);
}

static void read_messages(void) {
  CURLMsg* msg;
  int left = -1;
  while ((msg = curl_multi_info_read(g_multi, &left)) != NULL) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    CURLcode result = msg->data.result;
    struct job* j = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char**)&j);
    int known = 0;
    for (size_t i = 0; i < g_njobs && !known; ++i) known = g_jobs[i].easy == easy;
    CHECK(known, "DONE for a handle we never added");
    CHECK(j != NULL && j >= g_jobs && j < g_jobs + g_njobs && j->easy == easy,
          "CURLOPT_PRIVATE does not read back as the transfer's record");
    if (!known || j == NULL || j < g_jobs || j >= g_jobs + g_njobs || j->easy != easy) continue;
    j->done++;
    CHECK(j->done == 1, "transfer %zu: DONE number %d", j->index, j->done);
    CHECK(j->in_flight, "transfer %zu: DONE while not in flight", j->index);
    if (!j->in_flight) continue;
    j->result = (int)result;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &j->status);
    curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &j->os_errno);
    curl_multi_remove_handle(g_multi, easy);
    j->in_flight = 0;
    g_in_flight--;
    g_completed++;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* perform + poll */

static void run_perform(size_t concurrency) {
  int stalls = 0;
  while (g_completed < g_njobs) {
    add_more(concurrency);
    int running = 0;
    CURLMcode rc = curl_multi_perform(g_multi, &running);
    CHECK(rc == CURLM_OK, "curl_multi_perform = %d", (int)rc);
    read_messages();
    if (g_completed == g_njobs) break;
    if (running == 0 && g_in_flight > 0 && g_next >= g_njobs) {
      /* libcurl (and anything in between) says nothing runs, yet transfers have no DONE. */
      if (++stalls > 3) {
        CHECK(0, "stalled: running_handles=0 with %zu transfers without DONE", g_in_flight);
        return;
      }
    } else {
      stalls = 0;
    }
    rc = curl_multi_poll(g_multi, NULL, 0, 1000, NULL);
    CHECK(rc == CURLM_OK, "curl_multi_poll = %d", (int)rc);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* socket_action + epoll + timer callback */

static int g_epoll = -1;
static double g_timer_due = -1; /* monotonic ms, -1 = no timer */

static int g_trace = 0; /* FAULT_HOST_TRACE=1: every timer callback and socket_action on stderr */

static int on_timer(CURLM* multi, long timeout_ms, void* userp) {
  (void)multi;
  (void)userp;
  if (g_trace) fprintf(stderr, "trace %.3f timer %ld\n", now_ms(), timeout_ms);
  g_timer_due = timeout_ms < 0 ? -1 : now_ms() + (double)timeout_ms;
  return 0;
}

static int on_socket(CURL* easy, curl_socket_t s, int what, void* userp, void* socketp) {
  (void)easy;
  (void)userp;
  (void)socketp;
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(g_epoll, EPOLL_CTL_DEL, s, NULL); /* may already be gone with a closed fd */
    return 0;
  }
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
  if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
  /* The fd and what libcurl asked for, for the error-only report below. */
  ev.data.u64 = (uint64_t)(uint32_t)s | ((uint64_t)ev.events << 32);
  if (epoll_ctl(g_epoll, EPOLL_CTL_ADD, s, &ev) != 0) {
    CHECK(errno == EEXIST && epoll_ctl(g_epoll, EPOLL_CTL_MOD, s, &ev) == 0, "epoll_ctl %d: %s", s,
          strerror(errno));
  }
  return 0;
}

static void run_socket(size_t concurrency) {
  g_trace = getenv("FAULT_HOST_TRACE") != NULL;
  g_epoll = epoll_create1(EPOLL_CLOEXEC);
  if (g_epoll < 0) {
    perror("epoll_create1");
    exit(2);
  }
  curl_multi_setopt(g_multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(g_multi, CURLMOPT_TIMERFUNCTION, on_timer);
  double idle_since = -1;
  while (g_completed < g_njobs) {
    add_more(concurrency);
    int wait_ms = 1000;
    if (g_timer_due >= 0) {
      double left = g_timer_due - now_ms();
      wait_ms = left <= 0 ? 0 : (int)left + 1;
      if (wait_ms > 1000) wait_ms = 1000;
    }
    struct epoll_event events[64];
    int n = epoll_wait(g_epoll, events, 64, wait_ms);
    if (n < 0 && errno != EINTR) {
      perror("epoll_wait");
      exit(2);
    }
    int running = 0;
    for (int i = 0; i < n; ++i) {
      const int fd = (int)(uint32_t)events[i].data.u64;
      uint32_t got = events[i].events;
      /* epoll may report a reset as EPOLLERR alone (tcp_poll seeing sk_err before the shutdown
       * bits tcp_done sets next), and libcurl answers an error-only event with CURLE_SEND_ERROR
       * "select/poll returned error", no errno: the reset would look like a send failure. libuv
       * (uv__io_poll) merges in the events the watcher wants then, so the read or write meets
       * the error itself; so does this host, as Node's and every libuv host's loop does. */
      if ((got & (EPOLLIN | EPOLLOUT)) == 0 && (got & (EPOLLERR | EPOLLHUP)) != 0)
        got |= (uint32_t)(events[i].data.u64 >> 32) & (EPOLLIN | EPOLLOUT);
      int flags = 0;
      if (got & EPOLLIN) flags |= CURL_CSELECT_IN;
      if (got & EPOLLOUT) flags |= CURL_CSELECT_OUT;
      if (got & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
      CURLMcode rc = curl_multi_socket_action(g_multi, fd, flags, &running);
      if (g_trace)
        fprintf(stderr, "trace %.3f socket_action(%d, %d) -> running=%d\n", now_ms(), fd, flags, running);
      CHECK(rc == CURLM_OK, "curl_multi_socket_action(fd) = %d", (int)rc);
    }
    if (g_timer_due >= 0 && now_ms() >= g_timer_due) {
      g_timer_due = -1; /* the callback may arm it again from inside socket_action */
      if (g_trace) fprintf(stderr, "trace %.3f socket_action(TIMEOUT)\n", now_ms());
      CURLMcode rc = curl_multi_socket_action(g_multi, CURL_SOCKET_TIMEOUT, 0, &running);
      if (g_trace) fprintf(stderr, "trace %.3f -> running=%d\n", now_ms(), running);
      CHECK(rc == CURLM_OK, "curl_multi_socket_action(TIMEOUT) = %d", (int)rc);
    }
    read_messages();
    /* Transfers outstanding with no timer and no event for 5 s: nothing will ever wake us. */
    if (n == 0 && g_timer_due < 0 && g_in_flight > 0) {
      if (idle_since < 0) idle_since = now_ms();
      if (now_ms() - idle_since > 5000) {
        CHECK(0, "stalled: no timer armed, no socket event, %zu transfers without DONE", g_in_flight);
        return;
      }
    } else {
      idle_since = -1;
    }
  }
  close(g_epoll);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: fault_host perform|socket JOBFILE CONCURRENCY WATCHDOG_SECONDS\n");
    return 2;
  }
  int socket_mode = strcmp(argv[1], "socket") == 0;
  if (!socket_mode && strcmp(argv[1], "perform") != 0) {
    fprintf(stderr, "unknown loop %s\n", argv[1]);
    return 2;
  }
  size_t concurrency = (size_t)atoi(argv[3]);
  if (concurrency == 0) concurrency = 1;
  alarm((unsigned)atoi(argv[4]));
  load_jobs(argv[2]);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  g_multi = curl_multi_init();
  if (socket_mode) run_socket(concurrency);
  else run_perform(concurrency);
  for (size_t i = 0; i < g_njobs; ++i) {
    struct job* j = &g_jobs[i];
    printf("@@T %zu result=%d status=%ld errno=%ld done=%d hlen=%zu blen=%zu\n", j->index, j->result, j->status,
           j->os_errno, j->done,
           j->headers.len, j->body.len);
    if (j->headers.len) fwrite(j->headers.data, 1, j->headers.len, stdout);
    if (j->body.len) fwrite(j->body.data, 1, j->body.len, stdout);
    fputc('\n', stdout);
    if (j->in_flight) curl_multi_remove_handle(g_multi, j->easy);
    if (j->easy) curl_easy_cleanup(j->easy);
  }
  fflush(stdout);
  curl_multi_cleanup(g_multi);
  curl_global_cleanup();
  return g_failed;
}
