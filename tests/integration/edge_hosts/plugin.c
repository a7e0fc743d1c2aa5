/* plugin.c: a plugin that uses libcurl, built twice: plugin_openssl.so (linked to libcurl.so.4)
 * and plugin_gnutls.so (linked to libcurl-gnutls.so.4), the way a process ends up with two libcurl
 * flavours (one plugin from each distribution package). flavours_host dlopen()s both.
 *
 * plugin_run(ORIGIN, TLS_ORIGIN, CAFILE, KEYPREFIX, OUT, CAP) runs, each on ORIGIN/s/<key>/503,200:
 *   http   an easy perform
 *   multi  a transfer through a multi handle (perform + poll)
 *   https  an easy perform against TLS_ORIGIN with CAFILE (skipped when TLS_ORIGIN is "-")
 * and writes one line per transfer into OUT:
 *   <flavour> <what> result=<CURLcode> status=<http> served_by=<file> other_lib=<file|-> body=<body>
 * served_by is the object that called our CURLOPT_DEBUGFUNCTION (dladdr of its return address):
 * the libcurl that really ran the transfer. other_lib names a second object seen doing so (none
 * expected). A first line `<flavour> version=<curl_version()> version_lib=<file>` says which
 * library this plugin's own (not interposed) libcurl calls reach.
 */
#define _GNU_SOURCE
#include <curl/curl.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef PLUGIN_FLAVOUR
#error PLUGIN_FLAVOUR must name the flavour
#endif

struct state {
  char body[512];
  size_t len;
  char served_by[512];
  char other_lib[512];
};

static const char* object_of(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) && info.dli_fname) return info.dli_fname;
  return "?";
}

static size_t on_body(char* data, size_t size, size_t nmemb, void* userdata) {
  struct state* s = userdata;
  size_t n = size * nmemb;
  if (s->len + n < sizeof s->body) {
    memcpy(s->body + s->len, data, n);
    s->len += n;
    s->body[s->len] = '\0';
  }
  return n;
}

static int on_debug(CURL* easy, curl_infotype type, char* data, size_t size, void* userdata) {
  (void)easy, (void)type, (void)data, (void)size;
  struct state* s = userdata;
  const char* caller = object_of(__builtin_return_address(0));
  if (s->served_by[0] == '\0') {
    snprintf(s->served_by, sizeof s->served_by, "%s", caller);
  } else if (strcmp(s->served_by, caller) != 0 && s->other_lib[0] == '\0') {
    snprintf(s->other_lib, sizeof s->other_lib, "%s", caller);
  }
  return 0;
}

static CURL* new_handle(const char* url, const char* cafile, struct state* s) {
  CURL* easy = curl_easy_init();
  if (easy == NULL) return NULL;
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT, 20L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, s);
  curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
  curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, on_debug);
  curl_easy_setopt(easy, CURLOPT_DEBUGDATA, s);
  if (cafile) curl_easy_setopt(easy, CURLOPT_CAINFO, cafile);
  return easy;
}

static size_t report(char* out, size_t cap, size_t used, const char* what, int result, long status,
                     const struct state* s) {
  if (used >= cap) return used;
  int n = snprintf(out + used, cap - used, "%s %s result=%d status=%ld served_by=%s other_lib=%s body=%s%s",
                   PLUGIN_FLAVOUR, what, result, status, s->served_by[0] ? s->served_by : "-",
                   s->other_lib[0] ? s->other_lib : "-", s->body, s->len && s->body[s->len - 1] == '\n' ? "" : "\n");
  return n > 0 ? used + (size_t)n : used;
}

__attribute__((visibility("default"))) int plugin_run(const char* origin, const char* tls_origin,
                                                      const char* cafile, const char* prefix, char* out,
                                                      size_t cap) {
  char url[512];
  size_t used = 0;
  out[0] = '\0';
  int n = snprintf(out, cap, "%s version=%s version_lib=%s\n", PLUGIN_FLAVOUR, curl_version(),
                   object_of((const void*)&curl_version));
  used = n > 0 ? (size_t)n : 0;

  /* easy, plain HTTP */
  struct state s;
  memset(&s, 0, sizeof s);
  snprintf(url, sizeof url, "%s/s/%s%s-http/503,200", origin, prefix, PLUGIN_FLAVOUR);
  CURL* easy = new_handle(url, NULL, &s);
  CURLcode code = easy ? curl_easy_perform(easy) : CURLE_FAILED_INIT;
  long status = 0;
  if (easy) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  used = report(out, cap, used, "http", (int)code, status, &s);
  if (easy) curl_easy_cleanup(easy);

  /* multi */
  memset(&s, 0, sizeof s);
  snprintf(url, sizeof url, "%s/s/%s%s-multi/503,200", origin, prefix, PLUGIN_FLAVOUR);
  CURLM* multi = curl_multi_init();
  easy = new_handle(url, NULL, &s);
  int result = -1;
  status = 0;
  if (multi && easy) {
    curl_multi_add_handle(multi, easy);
    for (int turns = 0; result < 0 && turns < 2000; ++turns) {
      int running = 0;
      curl_multi_perform(multi, &running);
      CURLMsg* msg;
      int left;
      while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) result = (int)msg->data.result;
      }
      if (result < 0) curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_multi_remove_handle(multi, easy);
  }
  used = report(out, cap, used, "multi", result, status, &s);
  if (easy) curl_easy_cleanup(easy);
  if (multi) curl_multi_cleanup(multi);

  /* easy, HTTPS: the TLS library is the flavour's own */
  if (strcmp(tls_origin, "-") != 0) {
    memset(&s, 0, sizeof s);
    snprintf(url, sizeof url, "%s/s/%s%s-https/503,200", tls_origin, prefix, PLUGIN_FLAVOUR);
    easy = new_handle(url, cafile, &s);
    code = easy ? curl_easy_perform(easy) : CURLE_FAILED_INIT;
    status = 0;
    if (easy) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    used = report(out, cap, used, "https", (int)code, status, &s);
    if (easy) curl_easy_cleanup(easy);
  }
  return 0;
}
