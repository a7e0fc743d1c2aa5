/* The shared part of the multi hosts: see host_common.h. */
#define _GNU_SOURCE
#include "host_common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int g_failed = 0;

/* ------------------------------------------------------------------------------------------ */
/* SHA-256 (FIPS 180-4), enough to fingerprint bodies without another library. */

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256* s, const unsigned char* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], hh = s->h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
    uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
  s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += hh;
}

void sha256_init(struct sha256* s) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, iv, sizeof iv);
  s->bytes = 0;
  s->used = 0;
}

void sha256_update(struct sha256* s, const void* data, size_t n) {
  const unsigned char* p = data;
  s->bytes += n;
  while (n > 0) {
    size_t take = 64 - s->used < n ? 64 - s->used : n;
    memcpy(s->block + s->used, p, take);
    s->used += take;
    p += take;
    n -= take;
    if (s->used == 64) {
      sha256_block(s, s->block);
      s->used = 0;
    }
  }
}

void sha256_hex(struct sha256* s, char out[65]) {
  struct sha256 c = *s; /* finishing must not disturb the running digest */
  uint64_t bits = c.bytes * 8;
  unsigned char pad = 0x80, zero = 0, len[8];
  sha256_update(&c, &pad, 1);
  while (c.used != 56) sha256_update(&c, &zero, 1);
  for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update(&c, len, 8);
  for (int i = 0; i < 8; i++) sprintf(out + 8 * i, "%08x", c.h[i]);
  out[64] = '\0';
}

/* ------------------------------------------------------------------------------------------ */

double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void add_url(struct host* h, size_t* cap, const char* url) {
  if (h->n == *cap) {
    *cap = *cap ? 2 * *cap : 64;
    h->t = realloc(h->t, *cap * sizeof *h->t);
    if (!h->t) exit(2);
  }
  struct transfer* t = &h->t[h->n];
  memset(t, 0, sizeof *t);
  t->index = h->n++;
  t->url = strdup(url);
  t->result = -1;
  sha256_init(&t->body);
}

void host_init(struct host* h, const char* name, int argc, char** argv, int first) {
  memset(h, 0, sizeof *h);
  h->name = name;
  size_t cap = 0;
  for (int i = first; i < argc; i++) {
    if (argv[i][0] != '@') {
      add_url(h, &cap, argv[i]);
      continue;
    }
    FILE* f = fopen(argv[i] + 1, "r");
    if (!f) {
      fprintf(stderr, "%s: cannot read %s\n", name, argv[i] + 1);
      exit(2);
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\r\n")] = '\0';
      if (line[0]) add_url(h, &cap, line);
    }
    fclose(f);
  }
  if (h->n == 0) {
    fprintf(stderr, "%s: no URLs\n", name);
    exit(2);
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) exit(2);
  h->start_ms = now_ms();
}

static size_t on_write(char* data, size_t size, size_t nmemb, void* userdata) {
  struct transfer* t = userdata;
  sha256_update(&t->body, data, size * nmemb);
  t->len += size * nmemb;
  return size * nmemb;
}

static size_t on_header(char* data, size_t size, size_t nmemb, void* userdata) {
  struct transfer* t = userdata;
  if (size * nmemb >= 5 && memcmp(data, "HTTP/", 5) == 0) t->status_lines++;
  return size * nmemb;
}

CURL* host_easy(struct host* h, size_t i) {
  struct transfer* t = &h->t[i];
  CURL* e = curl_easy_init();
  if (!e) exit(2);
  curl_easy_setopt(e, CURLOPT_URL, t->url);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  if (getenv("MULTI_HOST_VERBOSE")) curl_easy_setopt(e, CURLOPT_VERBOSE, 1L); /* debugging by hand */
  t->easy = e;
  return e;
}

int host_add_next(struct host* h, CURLM* multi) {
  if (h->next >= h->n) return 0;
  CURL* e = host_easy(h, h->next);
  CURLMcode mc = curl_multi_add_handle(multi, e);
  CHECK(mc == CURLM_OK, "curl_multi_add_handle(%s) = %d", h->t[h->next].url, (int)mc);
  h->next++;
  return 1;
}

size_t host_read_messages(struct host* h, CURLM* multi, int cleanup) {
  size_t read = 0;
  int previous_left = -1; /* msgs_in_queue of the message before, -1 before the first */
  for (;;) {
    int left = -12345;
    CURLMsg* msg = curl_multi_info_read(multi, &left);
    if (!msg) {
      CHECK(previous_left <= 0, "info_read returned NULL while msgs_in_queue promised %d more", previous_left);
      CHECK(left == 0, "info_read returned NULL with msgs_in_queue=%d", left);
      break;
    }
    CHECK(left >= 0, "msgs_in_queue=%d", left);
    CHECK(previous_left != 0, "a message followed msgs_in_queue=0");
    if (previous_left > 0) CHECK(left == previous_left - 1, "msgs_in_queue=%d after %d", left, previous_left);
    previous_left = left;
    if (msg->msg != CURLMSG_DONE) {
      CHECK(0, "unexpected CURLMsg type %d", (int)msg->msg);
      continue;
    }
    CURL* easy = msg->easy_handle;
    CURLcode result = msg->data.result;
    struct transfer* t = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char**)&t);
    if (!t || t < h->t || t >= h->t + h->n || t->easy != easy) {
      CHECK(0, "DONE for a handle we never added (%p)", (void*)easy);
      continue;
    }
    read++;
    t->done++;
    CHECK(t->done == 1, "%s: DONE number %d", t->url, t->done);
    if (t->done == 1) {
      t->result = (int)result;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &t->status);
      t->t_ms = now_ms() - h->start_ms;
      t->cpu_ms = cpu_ms();
      t->finished = 1;
      h->completed++;
    }
    CURLMcode mc = curl_multi_remove_handle(multi, easy);
    CHECK(mc == CURLM_OK, "curl_multi_remove_handle(%s) = %d", t->url, (int)mc);
    if (cleanup) {
      curl_easy_cleanup(easy);
      t->easy = NULL;
    }
  }
  return read;
}

int host_report(struct host* h, int require_done) {
  double wall = now_ms() - h->start_ms;
  double cpu = cpu_ms();
  size_t done_total = 0;
  for (size_t i = 0; i < h->n; i++) {
    struct transfer* t = &h->t[i];
    char hex[65];
    sha256_hex(&t->body, hex);
    done_total += (size_t)t->done;
    if (require_done) CHECK(t->done == 1, "%s: %d DONE messages, expected exactly 1", t->url, t->done);
    printf("%s result=%d status=%ld body_sha256=%s len=%llu done=%d status_lines=%d t_ms=%.1f cpu_ms=%.1f\n",
           t->url, t->result, t->status, hex, (unsigned long long)t->len, t->done, t->status_lines, t->t_ms,
           t->cpu_ms);
  }
  printf("summary host=%s transfers=%zu done_total=%zu cpu_s=%.4f wall_s=%.4f loops=%ld\n", h->name, h->n,
         done_total, cpu / 1e3, wall / 1e3, h->loops);
  fflush(stdout);
  for (size_t i = 0; i < h->n; i++) {
    if (h->t[i].easy) curl_easy_cleanup(h->t[i].easy);
    free(h->t[i].url);
  }
  free(h->t);
  curl_global_cleanup();
  return g_failed ? 1 : 0;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "CHECK FAILED: watchdog: the host loop did not finish in time\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  (void)ignored;
  _exit(3);
}

void host_watchdog(unsigned seconds) {
  signal(SIGALRM, on_alarm);
  alarm(seconds);
}
