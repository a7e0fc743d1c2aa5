/* easy_host: an ordinary libcurl program (linked against the system libcurl, no knowledge of
 * curlretry) whose modes exercise the corners of the easy API that a preload must get right.
 * The integration tests run it with and without LD_PRELOAD=libcurlretry.so.
 *
 * Every mode prints the body it received on stdout and, on stderr, a line
 *   result=<CURLcode> status=<HTTP code>
 * followed by whatever the mode reports (headers, counters, timings) as `name=value` lines or
 * after a `--- headers ---` marker. The exit status is 0 unless one of the mode's own invariants
 * fails (each is printed as `CHECK FAILED: ...`); result codes that depend on the server's
 * script are asserted by the tests, not here. Exit 2 is a usage or setup error.
 *
 * usage: easy_host MODE ARGS...
 *   get URL                       write -> stdout, header callback -> buffer, printed after result
 *   body URL                      write -> stdout, no header callback at all
 *   short-write URL               first write call returns a short count (expect 23, one call)
 *   pause URL                     first write call returns CURL_WRITEFUNC_PAUSE, xferinfo unpauses
 *   dup-reset URL1 URL2           perform, duphandle + perform, reset + perform; three bodies
 *   progress-abort URL MS         xferinfo returns 1 once MS ms have passed; prints elapsed_ms
 *   upload URL FILE seek|noseek|fileonly   POST FILE through a read callback (or default fread)
 *   upload-pipe URL [FILE]        POST from a pipe fed by a thread (chunked, not seekable)
 *   threads URLPREFIX T N         T threads x N performs of URLPREFIX "t<i>-<j>/503,200"
 *   private URL                   CURLOPT_PRIVATE survives a (retried) perform
 *   header-only URL               CURLOPT_HEADER=1, no header callback: headers in the body stream
 *   failonerror URL               CURLOPT_FAILONERROR=1, headers printed after the result line
 */
#define _GNU_SOURCE
#include <curl/curl.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "host_support.h"

static int g_failed = 0;


/* ------------------------------------------------------------------------------------------ */
/* Small helpers */


static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static long status_of(CURL* easy) {
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

static void print_result(CURLcode code, long status) {
  fprintf(stderr, "result=%d status=%ld\n", (int)code, status);
}

static void print_headers(const struct buffer* headers) {
  fprintf(stderr, "--- headers ---\n");
  if (headers->len) fwrite(headers->data, 1, headers->len, stderr);
  fprintf(stderr, "--- end headers ---\n");
}

static size_t write_stdout(char* data, size_t size, size_t nmemb, void* userdata) {
  (void)userdata;
  return fwrite(data, size, nmemb, stdout);
}

static size_t write_buffer(char* data, size_t size, size_t nmemb, void* userdata) {
  buffer_append((struct buffer*)userdata, data, size * nmemb);
  return size * nmemb;
}

static CURL* new_handle(const char* url) {
  CURL* easy = curl_easy_init();
  if (easy == NULL) {
    fprintf(stderr, "curl_easy_init failed\n");
    exit(2);
  }
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  return easy;
}

/* ------------------------------------------------------------------------------------------ */
/* get: only the final response's headers may reach the header callback. */

static int mode_get(const char* url) {
  struct buffer headers = {0};
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, write_buffer);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &headers);
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  print_result(code, status_of(easy));
  print_headers(&headers);
  curl_easy_cleanup(easy);
  buffer_free(&headers);
  return 0;
}

/* body: a host that reads the body only (no header callback, no CURLOPT_HEADER). */

static int mode_body(const char* url) {
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  print_result(code, status_of(easy));
  curl_easy_cleanup(easy);
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* short-write: the host refuses its first chunk; libcurl must stop with CURLE_WRITE_ERROR and
 * never call the write callback again. The chunk it was offered is printed: it must belong to
 * the final response. */

struct short_write_state {
  int calls;
};

static size_t write_short(char* data, size_t size, size_t nmemb, void* userdata) {
  struct short_write_state* s = userdata;
  size_t n = size * nmemb;
  s->calls++;
  if (s->calls == 1) {
    fwrite(data, 1, n, stdout); /* what we were offered, for the test to inspect */
    return n > 0 ? n - 1 : 1;  /* short count (1 when n == 0, which is just as wrong) */
  }
  return n;
}

static int mode_short_write(const char* url) {
  struct short_write_state state = {0};
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_short);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &state);
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  print_result(code, status_of(easy));
  fprintf(stderr, "write_calls=%d\n", state.calls);
  CHECK(code == CURLE_WRITE_ERROR, "short write should end the transfer with 23, got %d", (int)code);
  CHECK(state.calls == 1, "write callback called %d times after refusing data", state.calls);
  curl_easy_cleanup(easy);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* pause: the first write call pauses; the progress callback unpauses from inside the transfer.
 * The data refused by the pause is delivered again, so the body arrives whole. */

struct pause_state {
  CURL* easy;
  int write_calls;
  int pauses;
  int paused;
  int unpauses;
  struct buffer body;
};

static size_t write_pause(char* data, size_t size, size_t nmemb, void* userdata) {
  struct pause_state* s = userdata;
  s->write_calls++;
  if (s->pauses == 0) {
    s->pauses = 1;
    s->paused = 1;
    return CURL_WRITEFUNC_PAUSE;
  }
  CHECK(!s->paused, "write callback called while paused");
  buffer_append(&s->body, data, size * nmemb);
  return size * nmemb;
}

static int xferinfo_unpause(void* userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                            curl_off_t ulnow) {
  (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
  struct pause_state* s = userdata;
  if (s->paused) {
    s->paused = 0;
    s->unpauses++;
    curl_easy_pause(s->easy, CURLPAUSE_CONT);
  }
  return 0;
}

static int mode_pause(const char* url) {
  struct pause_state state = {0};
  CURL* easy = new_handle(url);
  state.easy = easy;
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_pause);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, xferinfo_unpause);
  curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &state);
  curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
  CURLcode code = curl_easy_perform(easy);
  if (state.body.len) fwrite(state.body.data, 1, state.body.len, stdout);
  fflush(stdout);
  print_result(code, status_of(easy));
  fprintf(stderr, "pauses=%d unpauses=%d write_calls=%d\n", state.pauses, state.unpauses, state.write_calls);
  CHECK(state.pauses == 1, "expected exactly one pause, got %d", state.pauses);
  CHECK(state.unpauses == 1, "expected exactly one unpause from the progress callback, got %d", state.unpauses);
  curl_easy_cleanup(easy);
  buffer_free(&state.body);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* dup-reset: a duplicate carries the host's callbacks (not the shim's), a reset drops them. */

struct tagged_buffer {
  const char* tag;
  struct buffer body;
};

static size_t write_tagged_a(char* data, size_t size, size_t nmemb, void* userdata) {
  struct tagged_buffer* t = userdata;
  if (strcmp(t->tag, "A") != 0) {
    fprintf(stderr, "CHECK FAILED: write callback A got userdata tagged %s\n", t->tag);
    g_failed = 1;
  }
  buffer_append(&t->body, data, size * nmemb);
  return size * nmemb;
}

static size_t write_tagged_b(char* data, size_t size, size_t nmemb, void* userdata) {
  struct tagged_buffer* t = userdata;
  if (strcmp(t->tag, "B") != 0) {
    fprintf(stderr, "CHECK FAILED: write callback B got userdata tagged %s\n", t->tag);
    g_failed = 1;
  }
  buffer_append(&t->body, data, size * nmemb);
  return size * nmemb;
}

static void emit_body(int n, struct buffer* b) {
  printf("@@body%d len=%zu@@\n", n, b->len);
  if (b->len) fwrite(b->data, 1, b->len, stdout);
  printf("@@end%d@@\n", n);
  b->len = 0;
}

static int mode_dup_reset(const char* url1, const char* url2) {
  struct tagged_buffer a = {"A", {0}};
  struct tagged_buffer b = {"B", {0}};
  CURLcode codes[3];
  long statuses[3];

  CURL* original = new_handle(url1);
  curl_easy_setopt(original, CURLOPT_WRITEFUNCTION, write_tagged_a);
  curl_easy_setopt(original, CURLOPT_WRITEDATA, &a);
  codes[0] = curl_easy_perform(original);
  statuses[0] = status_of(original);
  emit_body(1, &a.body);

  CURL* copy = curl_easy_duphandle(original);
  if (copy == NULL) {
    fprintf(stderr, "curl_easy_duphandle failed\n");
    return 2;
  }
  curl_easy_setopt(copy, CURLOPT_URL, url2);
  codes[1] = curl_easy_perform(copy);
  statuses[1] = status_of(copy);
  emit_body(2, &a.body);

  curl_easy_reset(original);
  curl_easy_setopt(original, CURLOPT_URL, url2);
  curl_easy_setopt(original, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(original, CURLOPT_WRITEFUNCTION, write_tagged_b);
  curl_easy_setopt(original, CURLOPT_WRITEDATA, &b);
  codes[2] = curl_easy_perform(original);
  statuses[2] = status_of(original);
  emit_body(3, &b.body);
  fflush(stdout);

  for (int i = 0; i < 3; ++i) fprintf(stderr, "perform%d result=%d status=%ld\n", i + 1, (int)codes[i], statuses[i]);
  CURLcode worst = CURLE_OK;
  for (int i = 0; i < 3; ++i)
    if (codes[i] != CURLE_OK) worst = codes[i];
  print_result(worst, statuses[2]);
  curl_easy_cleanup(copy);
  curl_easy_cleanup(original);
  buffer_free(&a.body);
  buffer_free(&b.body);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* progress-abort: the host's progress callback aborts once MS ms have passed since perform. */

struct abort_state {
  double start;
  double limit_ms;
  int calls;
  int aborted;
};

static int xferinfo_abort(void* userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
  (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
  struct abort_state* s = userdata;
  s->calls++;
  if (now_ms() - s->start >= s->limit_ms) {
    s->aborted++;
    return 1;
  }
  return 0;
}

static int mode_progress_abort(const char* url, const char* ms) {
  struct abort_state state = {0};
  char errbuf[CURL_ERROR_SIZE] = "";
  state.limit_ms = atof(ms);
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, xferinfo_abort);
  curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &state);
  curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
  state.start = now_ms();
  CURLcode code = curl_easy_perform(easy);
  double elapsed = now_ms() - state.start;
  fflush(stdout);
  print_result(code, status_of(easy));
  fprintf(stderr, "elapsed_ms=%.0f progress_calls=%d aborts=%d\n", elapsed, state.calls, state.aborted);
  fprintf(stderr, "errbuf=%s\n", errbuf);
  curl_easy_cleanup(easy);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* upload: POST a file through the host's read callback, with or without a seek callback, or
 * through libcurl's default fread on CURLOPT_READDATA. */

struct file_state {
  FILE* file;
  long long read_bytes;
  int seeks;
};

static size_t read_file(char* buffer, size_t size, size_t nitems, void* userdata) {
  struct file_state* s = userdata;
  size_t n = fread(buffer, size, nitems, s->file);
  if (n == 0 && ferror(s->file)) return CURL_READFUNC_ABORT;
  s->read_bytes += (long long)n;
  return n;
}

static int seek_file(void* userdata, curl_off_t offset, int origin) {
  struct file_state* s = userdata;
  s->seeks++;
  return fseeko(s->file, (off_t)offset, origin) == 0 ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}

static int mode_upload(const char* url, const char* path, const char* how) {
  struct file_state state = {0};
  state.file = fopen(path, "rb");
  if (state.file == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
    return 2;
  }
  fseeko(state.file, 0, SEEK_END);
  curl_off_t size = (curl_off_t)ftello(state.file);
  fseeko(state.file, 0, SEEK_SET);

  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, size);
  if (strcmp(how, "fileonly") == 0) {
    curl_easy_setopt(easy, CURLOPT_READDATA, state.file); /* libcurl's default fread */
  } else {
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, read_file);
    curl_easy_setopt(easy, CURLOPT_READDATA, &state);
    if (strcmp(how, "seek") == 0) {
      curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, seek_file);
      curl_easy_setopt(easy, CURLOPT_SEEKDATA, &state);
    } else if (strcmp(how, "noseek") != 0) {
      fprintf(stderr, "upload wants seek, noseek or fileonly\n");
      return 2;
    }
  }
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  print_result(code, status_of(easy));
  fprintf(stderr, "size=%lld read_bytes=%lld seeks=%d file_pos=%lld\n", (long long)size, state.read_bytes,
          state.seeks, (long long)ftello(state.file));
  curl_easy_cleanup(easy);
  fclose(state.file);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* upload-pipe: a read callback on a pipe that a thread fills; no size, no seek: chunked. */

struct pipe_feed {
  int fd;
  FILE* source; /* NULL: a generated pattern */
  long long generated;
};

#define PIPE_PATTERN_BYTES 300000LL

static void* feed_pipe(void* arg) {
  struct pipe_feed* f = arg;
  char chunk[16384];
  if (f->source) {
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f->source)) > 0) {
      size_t off = 0;
      while (off < n) {
        ssize_t w = write(f->fd, chunk + off, n - off);
        if (w < 0) {
          if (errno == EINTR) continue;
          goto done;
        }
        off += (size_t)w;
      }
    }
  } else {
    long long i = 0;
    while (i < PIPE_PATTERN_BYTES) {
      size_t n = 0;
      for (; n < sizeof chunk && i < PIPE_PATTERN_BYTES; ++n, ++i) chunk[n] = (char)((i * 7 + 3) & 0xff);
      size_t off = 0;
      while (off < n) {
        ssize_t w = write(f->fd, chunk + off, n - off);
        if (w < 0) {
          if (errno == EINTR) continue;
          goto done;
        }
        off += (size_t)w;
      }
    }
  }
done:
  close(f->fd);
  return NULL;
}

struct pipe_state {
  int fd;
  long long read_bytes;
  int eof;
  int reads_after_eof;
};

static size_t read_pipe(char* buffer, size_t size, size_t nitems, void* userdata) {
  struct pipe_state* s = userdata;
  if (s->eof) s->reads_after_eof++;
  for (;;) {
    ssize_t n = read(s->fd, buffer, size * nitems);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CURL_READFUNC_ABORT;
    if (n == 0) s->eof = 1;
    s->read_bytes += n;
    return (size_t)n;
  }
}

static int mode_upload_pipe(const char* url, const char* path) {
  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    return 2;
  }
  struct pipe_feed feed = {fds[1], NULL, 0};
  if (path) {
    feed.source = fopen(path, "rb");
    if (feed.source == NULL) {
      fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
      return 2;
    }
  }
  pthread_t feeder;
  if (pthread_create(&feeder, NULL, feed_pipe, &feed) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 2;
  }
  struct pipe_state state = {fds[0], 0, 0, 0};
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_READFUNCTION, read_pipe);
  curl_easy_setopt(easy, CURLOPT_READDATA, &state);
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  print_result(code, status_of(easy));
  fprintf(stderr, "read_bytes=%lld eof=%d reads_after_eof=%d\n", state.read_bytes, state.eof, state.reads_after_eof);
  curl_easy_cleanup(easy);
  /* Drain whatever the feeder still wants to write so it can finish, then join it. */
  char sink[16384];
  while (read(fds[0], sink, sizeof sink) > 0) {
  }
  pthread_join(feeder, NULL);
  close(fds[0]);
  if (feed.source) fclose(feed.source);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* threads: T threads, each running N performs on handles of its own. */

struct thread_job {
  const char* prefix;
  const char* key_prefix; /* the part of prefix after "/s/", which the key starts with */
  int index;
  int count;
  int ok;
  int reported;
};

static pthread_mutex_t g_report_lock = PTHREAD_MUTEX_INITIALIZER;

static void* run_thread(void* arg) {
  struct thread_job* job = arg;
  char url[4096];
  char key[1024];
  char expected[1200];
  struct buffer body = {0};
  for (int j = 0; j < job->count; ++j) {
    snprintf(key, sizeof key, "%st%d-%d", job->key_prefix, job->index, j);
    snprintf(url, sizeof url, "%st%d-%d/503,200", job->prefix, job->index, j);
    snprintf(expected, sizeof expected, "ok key=%s attempt=2\n", key);
    body.len = 0;
    CURL* easy = new_handle(url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_buffer);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    CURLcode code = curl_easy_perform(easy);
    long status = status_of(easy);
    curl_easy_cleanup(easy);
    int good = code == CURLE_OK && status == 200 && body.len == strlen(expected) &&
               memcmp(body.data, expected, body.len) == 0;
    if (good) {
      job->ok++;
    } else if (job->reported < 3) {
      job->reported++;
      pthread_mutex_lock(&g_report_lock);
      fprintf(stderr, "bad t%d-%d: result=%d status=%ld body=%.*s\n", job->index, j, (int)code, status,
              (int)(body.len > 200 ? 200 : body.len), body.data ? body.data : "");
      pthread_mutex_unlock(&g_report_lock);
    }
  }
  buffer_free(&body);
  return NULL;
}

static int mode_threads(const char* prefix, const char* t_text, const char* n_text) {
  int threads = atoi(t_text);
  int count = atoi(n_text);
  if (threads <= 0 || count <= 0 || threads > 256) {
    fprintf(stderr, "threads wants T in 1..256 and N > 0\n");
    return 2;
  }
  const char* s = strstr(prefix, "/s/");
  const char* key_prefix = s ? s + 3 : "";
  struct thread_job* jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  if (!jobs || !ids) return 2;
  for (int i = 0; i < threads; ++i) {
    jobs[i] = (struct thread_job){prefix, key_prefix, i, count, 0, 0};
    if (pthread_create(&ids[i], NULL, run_thread, &jobs[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 2;
    }
  }
  int ok = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(ids[i], NULL);
    ok += jobs[i].ok;
  }
  printf("ok=%d\n", ok);
  fflush(stdout);
  print_result(ok == threads * count ? CURLE_OK : CURLE_RECV_ERROR, ok == threads * count ? 200 : 0);
  fprintf(stderr, "ok=%d of %d\n", ok, threads * count);
  CHECK(ok == threads * count, "%d of %d transfers did not get their own 200 body of attempt 2",
        threads * count - ok, threads * count);
  free(jobs);
  free(ids);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* private: CURLOPT_PRIVATE belongs to the host and must come back unchanged. */

static int mode_private(const char* url) {
  static int marker = 42;
  void* mine = &marker;
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, mine);
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  void* back = NULL;
  CURLcode info = curl_easy_getinfo(easy, CURLINFO_PRIVATE, &back);
  print_result(code, status_of(easy));
  fprintf(stderr, "private_same=%d\n", back == mine);
  CHECK(info == CURLE_OK, "CURLINFO_PRIVATE failed: %d", (int)info);
  CHECK(back == mine, "CURLINFO_PRIVATE changed: %p != %p", back, mine);
  curl_easy_cleanup(easy);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* header-only: CURLOPT_HEADER=1 and no header callback: headers arrive in the write stream. */

static int mode_header_only(const char* url) {
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_HEADER, 1L);
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  print_result(code, status_of(easy));
  curl_easy_cleanup(easy);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */
/* failonerror: libcurl suppresses the error body and returns 22. */

static int mode_failonerror(const char* url) {
  struct buffer headers = {0};
  CURL* easy = new_handle(url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, write_buffer);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &headers);
  curl_easy_setopt(easy, CURLOPT_FAILONERROR, 1L);
  CURLcode code = curl_easy_perform(easy);
  fflush(stdout);
  print_result(code, status_of(easy));
  print_headers(&headers);
  curl_easy_cleanup(easy);
  buffer_free(&headers);
  return g_failed;
}

/* ------------------------------------------------------------------------------------------ */

static int usage(void) {
  fprintf(stderr,
          "usage: easy_host get|short-write|pause|private|header-only|failonerror URL\n"
          "       easy_host dup-reset URL1 URL2\n"
          "       easy_host progress-abort URL MS\n"
          "       easy_host upload URL FILE seek|noseek|fileonly\n"
          "       easy_host upload-pipe URL [FILE]\n"
          "       easy_host threads URLPREFIX T N\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const char* mode = argv[1];
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    fprintf(stderr, "curl_global_init failed\n");
    return 2;
  }
  int rc;
  if (strcmp(mode, "get") == 0) {
    rc = mode_get(argv[2]);
  } else if (strcmp(mode, "body") == 0) {
    rc = mode_body(argv[2]);
  } else if (strcmp(mode, "short-write") == 0) {
    rc = mode_short_write(argv[2]);
  } else if (strcmp(mode, "pause") == 0) {
    rc = mode_pause(argv[2]);
  } else if (strcmp(mode, "dup-reset") == 0 && argc >= 4) {
    rc = mode_dup_reset(argv[2], argv[3]);
  } else if (strcmp(mode, "progress-abort") == 0 && argc >= 4) {
    rc = mode_progress_abort(argv[2], argv[3]);
  } else if (strcmp(mode, "upload") == 0 && argc >= 5) {
    rc = mode_upload(argv[2], argv[3], argv[4]);
  } else if (strcmp(mode, "upload-pipe") == 0) {
    rc = mode_upload_pipe(argv[2], argc >= 4 ? argv[3] : NULL);
  } else if (strcmp(mode, "threads") == 0 && argc >= 5) {
    rc = mode_threads(argv[2], argv[3], argv[4]);
  } else if (strcmp(mode, "private") == 0) {
    rc = mode_private(argv[2]);
  } else if (strcmp(mode, "header-only") == 0) {
    rc = mode_header_only(argv[2]);
  } else if (strcmp(mode, "failonerror") == 0) {
    rc = mode_failonerror(argv[2]);
  } else {
    rc = usage();
  }
  curl_global_cleanup();
  return rc;
}
