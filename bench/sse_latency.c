/* sse_latency: what curlretry adds to each event of a 200 text/event-stream.
 *
 * A server thread in this process answers each request with the shape of an Anthropic stream:
 * two setup events (message_start, ping), then N content_block_delta events, each written on its
 * own `gap` µs apart with its CLOCK_MONOTONIC write time in its data. A libcurl easy handle
 * (under LD_PRELOAD=libcurlretry.so or not) reads them; its write callback notes, for every
 * event, the time from the server's write to the callback that delivered it.
 *
 *   sse_latency REQUESTS EVENTS GAP_US [PORT URL]
 *
 * With PORT and URL the server listens on 127.0.0.1:PORT and the client asks URL instead (the
 * proxy variant: URL is a route of curlretry-proxy whose upstream is that port).
 *
 * Prints one line of key=value: p50/p99/max of content events (first_* for the first content
 * event of each stream: the time-to-first-content-byte) and of the setup events, in µs.
 * Binds 127.0.0.1 only; every loop is bounded by REQUESTS and EVENTS.
 */
#define _GNU_SOURCE
#include <curl/curl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct server {
  int listener;
  int requests;
  int events;
  long gap_us;
};

static int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int send_event(int fd, const char* type) {
  char buf[160];
  int n = snprintf(buf, sizeof buf, "event: %s\ndata: {\"type\":\"%s\",\"t\":%lld}\n\n", type, type,
                   (long long)now_ns());
  return write_all(fd, buf, (size_t)n);
}

static void pause_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void* serve(void* arg) {
  struct server* s = arg;
  for (int r = 0; r < s->requests; ++r) {
    int fd = accept(s->listener, NULL, NULL);
    if (fd < 0) return NULL;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char head[4096];
    size_t got = 0;
    while (got < sizeof head - 1) {  /* the request head, bounded */
      ssize_t n = read(fd, head + got, sizeof head - 1 - got);
      if (n <= 0) break;
      got += (size_t)n;
      head[got] = '\0';
      if (strstr(head, "\r\n\r\n")) break;
    }
    static const char kHead[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    int ok = write_all(fd, kHead, sizeof kHead - 1) == 0;
    ok = ok && send_event(fd, "message_start") == 0;
    ok = ok && send_event(fd, "ping") == 0;
    for (int i = 0; ok && i < s->events; ++i) {
      pause_us(s->gap_us);
      ok = send_event(fd, "content_block_delta") == 0;
    }
    close(fd);
  }
  return NULL;
}

struct samples {
  double* v;
  size_t n, cap;
};

static void add(struct samples* s, double us) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 1024;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (!s->v) abort();
  }
  s->v[s->n++] = us;
}

struct client {
  char carry[8192];
  size_t used;
  int first_seen;
  struct samples content, first, setup;
};

/* Splits what arrived into events (blank-line separated) and times each complete one. */
static size_t on_write(char* data, size_t size, size_t nmemb, void* userdata) {
  struct client* c = userdata;
  size_t n = size * nmemb;
  int64_t t = now_ns();
  if (c->used + n > sizeof c->carry) return 0;
  memcpy(c->carry + c->used, data, n);
  c->used += n;
  size_t start = 0;
  for (;;) {
    char* end = memmem(c->carry + start, c->used - start, "\n\n", 2);
    if (!end) break;
    size_t len = (size_t)(end - (c->carry + start)) + 2;
    char event[512];
    size_t copy = len < sizeof event - 1 ? len : sizeof event - 1;
    memcpy(event, c->carry + start, copy);
    event[copy] = '\0';
    char* stamp = strstr(event, "\"t\":");
    if (stamp) {
      double us = (double)(t - strtoll(stamp + 4, NULL, 10)) / 1000.0;
      if (strstr(event, "content_block_delta")) {
        add(&c->content, us);
        if (!c->first_seen) add(&c->first, us);
        c->first_seen = 1;
      } else {
        add(&c->setup, us);
      }
    }
    start += len;
  }
  memmove(c->carry, c->carry + start, c->used - start);
  c->used -= start;
  return n;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double pct(struct samples* s, double p) {
  if (s->n == 0) return -1;
  size_t i = (size_t)(p * (double)(s->n - 1) + 0.5);
  return s->v[i];
}

static void report(const char* name, struct samples* s) {
  qsort(s->v, s->n, sizeof *s->v, cmp);
  printf(" %s_n=%zu %s_p50_us=%.1f %s_p99_us=%.1f %s_max_us=%.1f", name, s->n, name, pct(s, 0.5), name,
         pct(s, 0.99), name, s->n ? s->v[s->n - 1] : -1.0);
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 6) {
    fprintf(stderr, "usage: sse_latency REQUESTS EVENTS GAP_US [PORT URL]\n");
    return 2;
  }
  struct server s = {-1, atoi(argv[1]), atoi(argv[2]), atol(argv[3])};
  if (s.requests < 1 || s.requests > 100000 || s.events < 1 || s.events > 100000 || s.gap_us < 0 ||
      s.gap_us > 1000000) {
    fprintf(stderr, "sse_latency: REQUESTS 1..100000, EVENTS 1..100000, GAP_US 0..1000000\n");
    return 2;
  }
  s.listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if (argc == 6) {
    int one = 1;  /* the same port run after run: TIME_WAIT must not refuse it */
    setsockopt(s.listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    addr.sin_port = htons((uint16_t)atoi(argv[4]));
  }
  if (s.listener < 0 || bind(s.listener, (struct sockaddr*)&addr, sizeof addr) != 0 ||
      listen(s.listener, 16) != 0 || getsockname(s.listener, (struct sockaddr*)&addr, &len) != 0) {
    perror("sse_latency: listen");
    return 1;
  }
  pthread_t thread;
  pthread_create(&thread, NULL, serve, &s);
  char url[512];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/messages", ntohs(addr.sin_port));
  if (argc == 6) snprintf(url, sizeof url, "%s", argv[5]);

  curl_global_init(CURL_GLOBAL_DEFAULT);
  struct client c;
  memset(&c, 0, sizeof c);
  CURL* easy = curl_easy_init();
  int failed = 0;
  for (int r = 0; r < s.requests; ++r) {
    c.used = 0;
    c.first_seen = 0;
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &c);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT, 60L);
    if (curl_easy_perform(easy) != CURLE_OK) ++failed;
  }
  curl_easy_cleanup(easy);
  pthread_join(thread, NULL);
  printf("failed=%d", failed);
  report("content", &c.content);
  report("first", &c.first);
  report("setup", &c.setup);
  printf("\n");
  return failed ? 1 : 0;
}
