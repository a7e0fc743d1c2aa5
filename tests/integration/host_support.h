/* What every C test host needs: a CHECK that records a failure without stopping the host (the
 * includer defines `int g_failed`), and a growable NUL-terminated byte buffer. Header-only so
 * each host stays one self-contained program. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                             \
  do {                                               \
    if (!(cond)) {                                   \
      fprintf(stderr, "CHECK FAILED: " __VA_ARGS__); \
      fputc('\n', stderr);                           \
      g_failed = 1;                                  \
    }                                                \
  } while (0)

struct buffer {
  char* data;
  size_t len;
  size_t cap;
};

static inline void buffer_append(struct buffer* b, const char* data, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char* p = realloc(b->data, cap);
    if (p == NULL) {
      fprintf(stderr, "out of memory\n");
      exit(2);
    }
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, data, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static inline void buffer_free(struct buffer* b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
