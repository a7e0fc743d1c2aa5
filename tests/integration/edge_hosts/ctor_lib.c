/* ctor_lib: a shared library (DT_NEEDED by ctor_host) that uses libcurl at the edges of the
 * process's life:
 *   - its constructor runs a retried transfer; the dynamic loader runs it before the constructors
 *     of an LD_PRELOADed libcurlretry.so (a needed library comes later in the search list than a
 *     preloaded one, so it is initialised first), i.e. before the shim's own static initialisers;
 *   - its constructor registers, before that transfer, an atexit handler: it runs after
 *     everything registered later, the shim's static destructors included, and runs a transfer;
 *   - its destructor runs a transfer during _dl_fini.
 * The constructor also writes `load constructor ran` (glibc runs it again if the object is
 * dlopen()ed after its destructor ran, during exit).
 * Keys: EDGE_KEYPREFIX + ctor | atexit-early | dtor, script 503,200. Results are written to fd 1
 * with write(2) (stdio may be gone): `<where> result=<CURLcode> status=<http> body=<body>`.
 * EDGE_ORIGIN unset: the library does nothing. EDGE_SKIP_CTOR set: no transfer in the constructor
 * (the exit handlers and the destructor still run theirs).
 */
#define _GNU_SOURCE
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct body {
  char data[512];
  size_t len;
};

static size_t on_body(char* data, size_t size, size_t nmemb, void* userdata) {
  struct body* b = userdata;
  size_t n = size * nmemb;
  if (b->len + n < sizeof b->data) {
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
  }
  return n;
}

__attribute__((visibility("default"))) void edge_transfer(const char* where) {
  const char* origin = getenv("EDGE_ORIGIN");
  const char* prefix = getenv("EDGE_KEYPREFIX");
  if (origin == NULL || prefix == NULL) return;
  char url[1024], line[2048];
  struct body b = {{0}, 0};
  snprintf(url, sizeof url, "%s/s/%s%s/503,200", origin, prefix, where);
  CURL* easy = curl_easy_init();
  CURLcode code = CURLE_FAILED_INIT;
  long status = 0;
  if (easy) {
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &b);
    code = curl_easy_perform(easy);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(easy);
  }
  int n = snprintf(line, sizeof line, "%s result=%d status=%ld body=%s%s", where, (int)code, status, b.data,
                   b.len && b.data[b.len - 1] == '\n' ? "" : "\n");
  if (n > 0 && write(1, line, (size_t)n) < 0) _exit(5);
}

static void atexit_early(void) { edge_transfer("atexit-early"); }

__attribute__((constructor)) static void on_load(void) {
  if (getenv("EDGE_ORIGIN") == NULL) return;
  if (write(1, "load constructor ran\n", 21) < 0) _exit(5); /* once per process, unless re-run */
  atexit(atexit_early);
  /* EDGE_SKIP_CTOR=1: register the exit handler only (the shim is first used from main). */
  if (getenv("EDGE_SKIP_CTOR") == NULL) edge_transfer("ctor");
}

__attribute__((destructor)) static void on_unload(void) { edge_transfer("dtor"); }
