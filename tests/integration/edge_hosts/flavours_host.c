/* flavours_host: a program that links no libcurl itself and dlopen()s (RTLD_LOCAL) two plugins,
 * one linked to libcurl.so.4 (OpenSSL) and one to libcurl-gnutls.so.4, then lets each run its
 * transfers (plugin.c), first one after the other, then both at once on two threads.
 *
 * usage: flavours_host PLUGIN_DIR ORIGIN TLS_ORIGIN|- CAFILE|- KEYPREFIX
 * Prints the plugins' report lines (plugin.c) on stdout, prefixed by the round (`seq` or `par`).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*plugin_run_fn)(const char*, const char*, const char*, const char*, char*, size_t);

static const char *g_origin, *g_tls_origin, *g_cafile, *g_prefix;

struct run {
  plugin_run_fn fn;
  char prefix[256];
  char out[8192];
};

static void* run_plugin(void* arg) {
  struct run* r = arg;
  r->fn(g_origin, g_tls_origin, g_cafile, r->prefix, r->out, sizeof r->out);
  return NULL;
}

static void print_prefixed(const char* round, const char* text) {
  const char* line = text;
  while (*line) {
    const char* end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    printf("%s %.*s\n", round, (int)n, line);
    line += n + (end ? 1 : 0);
  }
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: flavours_host PLUGIN_DIR ORIGIN TLS_ORIGIN|- CAFILE|- KEYPREFIX\n");
    return 2;
  }
  alarm(120);
  g_origin = argv[2];
  g_tls_origin = argv[3];
  g_cafile = strcmp(argv[4], "-") == 0 ? NULL : argv[4];
  g_prefix = argv[5];
  const char* names[2] = {"plugin_openssl.so", "plugin_gnutls.so"};
  plugin_run_fn fns[2];
  for (int i = 0; i < 2; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
      fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
      return 2;
    }
    fns[i] = (plugin_run_fn)dlsym(h, "plugin_run");
    if (fns[i] == NULL) {
      fprintf(stderr, "dlsym plugin_run in %s: %s\n", path, dlerror());
      return 2;
    }
  }
  static struct run runs[4];
  for (int i = 0; i < 2; ++i) {
    runs[i].fn = fns[i];
    snprintf(runs[i].prefix, sizeof runs[i].prefix, "%sseq-", g_prefix);
    run_plugin(&runs[i]);
    print_prefixed("seq", runs[i].out);
  }
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    runs[2 + i].fn = fns[i];
    snprintf(runs[2 + i].prefix, sizeof runs[2 + i].prefix, "%spar-", g_prefix);
    pthread_create(&threads[i], NULL, run_plugin, &runs[2 + i]);
  }
  for (int i = 0; i < 2; ++i) {
    pthread_join(threads[i], NULL);
    print_prefixed("par", runs[2 + i].out);
  }
  fflush(stdout);
  return 0;
}
