/* llm_load: the upstream and the stream client of bench/llm_proxy.sh (issue 27, item 5): what a
 * proxy adds to LLM-shaped traffic.
 *
 *   llm_load serve PORT_FILE
 *       The upstream, one epoll thread on 127.0.0.1 (a free port, written to PORT_FILE). It exits
 *       when its stdin reaches EOF (the script's lifeline), so it cannot outlive the script.
 *         GET .../complete            200 application/json, 600-byte body with Content-Length,
 *                                     kept alive (the non-streamed request)
 *         GET .../stream/E/MIN/MAX    200 text/event-stream, Connection: close: message_start,
 *                                     then E content_block_delta events, each MIN..MAX ms after
 *                                     the one before (uniform; the first after 200 + 0..MAX), then
 *                                     message_stop and close. Each event carries the
 *                                     CLOCK_MONOTONIC time (ns) of its write: "t":NS
 *         GET .../hold                headers, message_start and one content event, then nothing
 *                                     until the peer closes (an idle stream: a model thinking);
 *                                     any method: a request body is read and dropped
 *   llm_load streams PORT PATH N
 *       N concurrent GETs of PATH on 127.0.0.1:PORT (a /stream/ path, directly or through a
 *       proxy); for each content event, the time from the upstream's write to this process's
 *       read (both CLOCK_MONOTONIC on one machine). Prints one key=value line: streams_ok,
 *       events, p50_us, p99_us, max_us, failed, first_error.
 *   llm_load hold PORT PATH TARGET STEP RSS_PIDS [BODY_BYTES]
 *       Opens idle streams (a /hold path) STEP at a time until TARGET are open at once or a batch
 *       fails; a stream counts once its first content event arrived. RSS_PIDS (comma list) are the
 *       proxy's processes: their VmRSS is read before, at 1,000 streams and at the end. Prints
 *       held, rss_*_kib, kib_per_stream (growth to 1,000 / 1,000) and first_error (why it stopped).
 *       With BODY_BYTES, each stream is a POST of a JSON body that long (an agent's request: its
 *       conversation and tools), not a GET.
 *
 * The clients speak HTTP/1.1 on raw non-blocking sockets (no libcurl: 10,000 streams in one
 * process, and nothing of the client's own between the socket and the timestamp). They read the
 * stamps in the body whatever the proxy's framing (a proxy may re-chunk a close-delimited body).
 * Every loop is bounded: each client run has a time limit (120 s), each batch of `hold` 10 s.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return -1;  /* events are small; a full socket buffer means the reader is gone */
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The upstream */

#define MAX_FD 65536
enum { IDLE_CONN = 0, READING, STREAMING, HOLDING };
struct conn {
  int state;
  char head[4096];
  size_t got;
  int left;             /* content events still to send */
  int min_ms, max_ms;
  int64_t next_ns;      /* when the next event is due */
  int active_index;     /* in the active list while STREAMING */
};
static struct conn *conns[MAX_FD];
static int active[MAX_FD], n_active;
static unsigned rng = 12345;
static int rnd(int lo, int hi) {
  rng = rng * 1103515245u + 12345u;
  return hi <= lo ? lo : lo + (int)((rng >> 8) % (unsigned)(hi - lo + 1));
}

static void close_conn(int ep, int fd) {
  struct conn *c = conns[fd];
  if (c && c->state == STREAMING) {
    int i = c->active_index;
    active[i] = active[--n_active];
    conns[active[i]]->active_index = i;
  }
  epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
  close(fd);
  free(c);
  conns[fd] = NULL;
}

static int send_event(int fd, const char *type, char stamp) {
  char buf[200];
  int n = snprintf(buf, sizeof buf,
                   "event: %s\ndata: {\"type\":\"%s\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
                   "\"text\":\" token\"},\"%c\":%lld}\n\n",
                   type, type, stamp, (long long)now_ns());
  return write_all(fd, buf, (size_t)n);
}

/* The first content event comes kThinkMs + 0..MAX ms after message_start (a model's time to first
 * token): the per-event figures are then those of streams already set up, not of 1,000
 * connections being accepted at once. */
enum { kThinkMs = 200 };

static const char kSseHead[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    "Connection: close\r\n\r\n";

/* One complete request head in c->head: answer it. Returns 0 to keep the connection. */
static int answer(int ep, int fd, struct conn *c) {
  char path[512] = "";
  sscanf(c->head, "%*s %511s", path);
  if (strstr(path, "/complete")) {
    static char reply[1024];
    static size_t reply_len;
    if (!reply_len) {
      char body[601];
      memset(body, 'x', 600);
      body[600] = '\0';
      memcpy(body, "{\"type\":\"message\",\"content\":\"", 29);
      memcpy(body + 598, "\"}", 2);
      reply_len = (size_t)snprintf(reply, sizeof reply,
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 600\r\n\r\n%s",
                                   body);
    }
    c->got = 0;
    c->state = READING;
    return write_all(fd, reply, reply_len);
  }
  int e, lo, hi;
  char *s = strstr(path, "/stream/");
  if (s && sscanf(s, "/stream/%d/%d/%d", &e, &lo, &hi) == 3 && e >= 0 && e <= 100000 && lo >= 0 && hi >= lo &&
      hi <= 60000) {
    if (write_all(fd, kSseHead, sizeof kSseHead - 1) || send_event(fd, "message_start", 's')) return -1;
    c->state = STREAMING;
    c->left = e;
    c->min_ms = lo;
    c->max_ms = hi;
    c->next_ns = now_ns() + (int64_t)(kThinkMs + rnd(0, hi)) * 1000000;
    c->active_index = n_active;
    active[n_active++] = fd;
    return 0;
  }
  if (strstr(path, "/hold")) {
    /* One content event: a proxy that holds a stream's setup events until its first content
     * (curlretry's in-band error check) forwards it then; after it, nothing. */
    if (write_all(fd, kSseHead, sizeof kSseHead - 1) || send_event(fd, "message_start", 's') ||
        send_event(fd, "content_block_delta", 't'))
      return -1;
    c->state = HOLDING;
    return 0;
  }
  static const char kNotFound[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
  c->got = 0;
  return write_all(fd, kNotFound, sizeof kNotFound - 1);
  (void)ep;
}

static int serve(const char *port_file) {
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 4096) || getsockname(ls, (struct sockaddr *)&a, &len)) {
    perror("llm_load serve: listen");
    return 1;
  }
  nonblock(ls);
  FILE *f = fopen(port_file, "w");
  if (!f) return 1;
  fprintf(f, "%d\n", ntohs(a.sin_port));
  fclose(f);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
  epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
  ev.data.fd = 0;
  epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);  /* the lifeline */
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(ep, evs, 256, n_active ? 1 : 1000);
    for (int i = 0; i < n; ++i) {
      int fd = evs[i].data.fd;
      if (fd == 0) {
        char b[64];
        if (read(0, b, sizeof b) <= 0) return 0;
        continue;
      }
      if (fd == ls) {
        for (int k = 0; k < 256; ++k) {
          int cfd = accept(ls, NULL, NULL);
          if (cfd < 0) break;
          if (cfd >= MAX_FD) { close(cfd); continue; }
          nonblock(cfd);
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conns[cfd] = calloc(1, sizeof(struct conn));
          conns[cfd]->state = READING;
          struct epoll_event cev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = cfd};
          epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev);
        }
        continue;
      }
      struct conn *c = conns[fd];
      if (!c) continue;
      if (c->state != READING) {  /* a stream's peer: its request body, then only its close */
        char b[16384];
        ssize_t r = read(fd, b, sizeof b);
        if (r == 0 || (r < 0 && errno != EAGAIN)) close_conn(ep, fd);
        continue;
      }
      ssize_t r = read(fd, c->head + c->got, sizeof c->head - 1 - c->got);
      if (r <= 0) {
        if (r == 0 || errno != EAGAIN) close_conn(ep, fd);
        continue;
      }
      c->got += (size_t)r;
      c->head[c->got] = '\0';
      if (strstr(c->head, "\r\n\r\n")) {
        if (answer(ep, fd, c)) close_conn(ep, fd);
      } else if (c->got >= sizeof c->head - 1) {
        close_conn(ep, fd);
      }
    }
    int64_t t = now_ns();
    for (int i = 0; i < n_active; ++i) {
      int fd = active[i];
      struct conn *c = conns[fd];
      if (c->next_ns > t) continue;
      int fail = send_event(fd, c->left > 0 ? "content_block_delta" : "message_stop", c->left > 0 ? 't' : 's');
      if (fail || c->left-- <= 0) {
        close_conn(ep, fd);  /* swaps the last active stream into slot i */
        --i;
        continue;
      }
      c->next_ns = t + (int64_t)rnd(c->min_ms, c->max_ms) * 1000000;
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* The clients */

struct stream {
  int fd;
  int state;  /* 0 connecting/sending, 1 reading head, 2 body, 3 done, 4 failed */
  char buf[8192];
  size_t used;
  int events;
  int started;  /* message_start seen */
  size_t sent;  /* of the request (state 0) */
};

static char first_error[200] = "none";
static void note_error(const char *what) {
  if (strcmp(first_error, "none") == 0) {
    snprintf(first_error, sizeof first_error, "%s", what);
    for (char *p = first_error; *p; ++p)
      if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '=') *p = '_';
  }
}

static double *samples;
static size_t n_samples, cap_samples;
static void add_sample(double us) {
  if (n_samples == cap_samples) {
    cap_samples = cap_samples ? cap_samples * 2 : 65536;
    samples = realloc(samples, cap_samples * sizeof *samples);
    if (!samples) abort();
  }
  samples[n_samples++] = us;
}

static int open_stream(int ep, struct stream *s, int port) {
  s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (s->fd < 0) {
    char m[80];
    snprintf(m, sizeof m, "client socket: %s", strerror(errno));
    note_error(m);
    return -1;
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(s->fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
    char m[80];
    snprintf(m, sizeof m, "connect: %s", strerror(errno));
    note_error(m);
    close(s->fd);
    return -1;
  }
  struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.ptr = s};
  epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
  s->state = 0;
  return 0;
}

/* Reads what arrived; timestamps the content events. Returns -1 when the stream ended. */
static int on_readable(struct stream *s, int want_events) {
  for (;;) {
    ssize_t r = read(s->fd, s->buf + s->used, sizeof s->buf - 1 - s->used);
    if (r < 0 && errno == EAGAIN) return 0;
    if (r <= 0) {
      if (s->state == 2 && s->events >= want_events && want_events >= 0) {
        s->state = 3;
      } else {
        char m[120];
        snprintf(m, sizeof m, "%s after %d events (state %d)", r == 0 ? "EOF" : strerror(errno), s->events,
                 s->state);
        note_error(m);
        s->state = 4;
      }
      return -1;
    }
    int64_t t = now_ns();
    s->used += (size_t)r;
    s->buf[s->used] = '\0';
    size_t start = 0;
    if (s->state == 1) {
      char *end = strstr(s->buf, "\r\n\r\n");
      if (!end) {
        if (s->used >= sizeof s->buf - 1) { note_error("head too long"); s->state = 4; return -1; }
        continue;
      }
      if (strncmp(s->buf, "HTTP/1.1 200", 12) != 0 && strncmp(s->buf, "HTTP/1.0 200", 12) != 0) {
        char m[120];
        snprintf(m, sizeof m, "status: %.40s", s->buf);
        char *nl = strchr(m, '\r');
        if (nl) *nl = '\0';
        note_error(m);
        s->state = 4;
        return -1;
      }
      s->state = 2;
      start = (size_t)(end + 4 - s->buf);
    }
    /* Stamps: "t":NS} for content events, "s":NS} for message_start/stop. */
    for (;;) {
      char *p = memchr(s->buf + start, '"', s->used - start);
      if (!p) { start = s->used; break; }
      size_t at = (size_t)(p - s->buf);
      if (s->used - at < 5) { start = at; break; }  /* maybe a stamp split across reads */
      if ((p[1] == 't' || p[1] == 's') && p[2] == '"' && p[3] == ':') {
        char *end;
        long long v = strtoll(p + 4, &end, 10);
        if (*end == '\0') { start = at; break; }  /* digits may continue in the next read */
        if (*end == '}') {
          if (p[1] == 't') {
            add_sample((double)(t - v) / 1000.0);
            ++s->events;
          } else if (s->started && want_events >= 0 && s->events >= want_events) {
            s->state = 3;  /* message_stop: done, whether the proxy closes or keeps the connection */
            return -1;
          } else {
            s->started = 1;
          }
          start = (size_t)(end + 1 - s->buf);
          continue;
        }
      }
      start = at + 1;
    }
    memmove(s->buf, s->buf + start, s->used - start);
    s->used -= start;
  }
}

/* Every stream of a run sends the same request: a GET of the path, or a POST with a body. */
static char *request;
static size_t request_len;
static void make_request(const char *path, size_t body_bytes) {
  char head[800];
  int n = body_bytes ? snprintf(head, sizeof head,
                                "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                                "Content-Type: application/json\r\nContent-Length: %zu\r\nUser-Agent: llm_load\r\n\r\n",
                                path, body_bytes)
                     : snprintf(head, sizeof head,
                                "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                                "User-Agent: llm_load\r\n\r\n", path);
  request_len = (size_t)n + body_bytes;
  request = malloc(request_len);
  if (!request) abort();
  memcpy(request, head, (size_t)n);
  if (body_bytes) {  /* {"x":"xxx...x"} */
    memset(request + n, 'x', body_bytes);
    memcpy(request + n, "{\"x\":\"", body_bytes < 6 ? body_bytes : 6);
    if (body_bytes >= 8) memcpy(request + n + body_bytes - 2, "\"}", 2);
  }
}

/* Sends what is left of the request; the rest, if the socket is full, at its next EPOLLOUT. */
static int send_request(struct stream *s) {
  ssize_t w = write(s->fd, request + s->sent, request_len - s->sent);
  if (w < 0 && errno == EAGAIN) return 0;
  if (w <= 0) {
    char m[80];
    snprintf(m, sizeof m, "send: %s", strerror(errno));
    note_error(m);
    s->state = 4;
    return -1;
  }
  s->sent += (size_t)w;
  if (s->sent == request_len) s->state = 1;
  return 0;
}

/* One round of events on the client side. want_events < 0: idle streams (never complete). */
static void pump(int ep, int want_events, int timeout_ms) {
  struct epoll_event evs[512];
  int n = epoll_wait(ep, evs, 512, timeout_ms);
  for (int i = 0; i < n; ++i) {
    struct stream *s = evs[i].data.ptr;
    if (s->state >= 3) continue;
    if (s->state == 0) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err) {
        char m[80];
        snprintf(m, sizeof m, "connect: %s", strerror(err));
        note_error(m);
        s->state = 4;
      } else if (send_request(s) == 0 && s->state == 1) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = s};
        epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
      }
      if (s->state == 4) { epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL); close(s->fd); }
      continue;
    }
    if (on_readable(s, want_events) < 0) {
      epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
      close(s->fd);
    }
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double pct(double q) {
  if (!n_samples) return -1;
  size_t i = (size_t)(q * (double)(n_samples - 1) + 0.5);
  return samples[i];
}

static int run_streams(int port, const char *path, int n) {
  int want = -1, e, lo, hi;
  const char *p = strstr(path, "/stream/");
  if (p && sscanf(p, "/stream/%d/%d/%d", &e, &lo, &hi) == 3) want = e;
  if (want < 0 || n < 1 || n > 20000) { fprintf(stderr, "llm_load streams: PATH must be .../stream/E/MIN/MAX, N 1..20000\n"); return 2; }
  make_request(path, 0);
  struct stream *ss = calloc((size_t)n, sizeof *ss);
  int ep = epoll_create1(0);
  for (int i = 0; i < n; ++i)
    if (open_stream(ep, &ss[i], port) != 0) ss[i].state = 4;
  int64_t limit = now_ns() + 120LL * 1000000000;
  for (;;) {
    int open = 0;
    for (int i = 0; i < n; ++i) open += ss[i].state < 3;
    if (!open || now_ns() > limit) break;
    pump(ep, want, 100);
  }
  int ok = 0, failed = 0;
  for (int i = 0; i < n; ++i) {
    ok += ss[i].state == 3;
    failed += ss[i].state != 3;
  }
  qsort(samples, n_samples, sizeof *samples, cmp);
  printf("streams=%d streams_ok=%d failed=%d events=%zu p50_us=%.1f p99_us=%.1f max_us=%.1f first_error=%s\n", n, ok,
         failed, n_samples, pct(0.5), pct(0.99), n_samples ? samples[n_samples - 1] : -1.0, first_error);
  return 0;
}

static long rss_kib(const char *pids) {
  long total = 0;
  char list[1024];
  snprintf(list, sizeof list, "%s", pids);
  for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%s/status", tok);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "VmRSS:", 6) == 0) total += atol(line + 6);
    fclose(f);
  }
  return total;
}

static int run_hold(int port, const char *path, int target, int step, const char *pids, long body_bytes) {
  if (target < 1 || target > 20000 || step < 1 || body_bytes < 0 || body_bytes > 16 * 1024 * 1024) return 2;
  make_request(path, (size_t)body_bytes);
  struct stream *ss = calloc((size_t)target, sizeof *ss);
  int ep = epoll_create1(0);
  long before = rss_kib(pids), at_1000 = -1;
  int opened = 0, held = 0;
  while (opened < target) {
    int batch_end = opened + step > target ? target : opened + step;
    for (; opened < batch_end; ++opened)
      if (open_stream(ep, &ss[opened], port) != 0) { ss[opened].state = 4; }
    int64_t limit = now_ns() + 10LL * 1000000000;
    int pending = 1;
    while (pending && now_ns() < limit) {
      pump(ep, -1, 100);
      pending = 0;
      for (int i = 0; i < opened; ++i) pending += ss[i].state < 3 && !ss[i].events;
    }
    int alive = 0, bad = 0;
    for (int i = 0; i < opened; ++i) {
      alive += ss[i].state < 3 && ss[i].events;
      bad += ss[i].state >= 3 || !ss[i].events;
    }
    if (pending) note_error("no first event within 10 s");
    held = alive;
    if (at_1000 < 0 && alive >= 1000) at_1000 = rss_kib(pids);
    if (bad) break;
  }
  long end = rss_kib(pids);
  long per_1000 = at_1000 >= 0 ? at_1000 - before : -1;
  printf("held=%d target=%d opened=%d rss_before_kib=%ld rss_1000_kib=%ld rss_end_kib=%ld kib_per_1000=%ld "
         "kib_per_stream=%.2f first_error=%s\n",
         held, target, opened, before, at_1000, end, per_1000, per_1000 >= 0 ? per_1000 / 1000.0 : -1.0, first_error);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "serve") == 0) return serve(argv[2]);
  if (argc == 5 && strcmp(argv[1], "streams") == 0) return run_streams(atoi(argv[2]), argv[3], atoi(argv[4]));
  if ((argc == 7 || argc == 8) && strcmp(argv[1], "hold") == 0)
    return run_hold(atoi(argv[2]), argv[3], atoi(argv[4]), atoi(argv[5]), argv[6], argc == 8 ? atol(argv[7]) : 0);
  fprintf(stderr,
          "usage: llm_load serve PORT_FILE\n"
          "       llm_load streams PORT PATH N\n"
          "       llm_load hold PORT PATH TARGET STEP RSS_PIDS [BODY_BYTES]\n");
  return 2;
}
