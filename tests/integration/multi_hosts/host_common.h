/* What every multi host shares: the URL list, one record per transfer (body digest, DONE count,
 * result, status, when it finished), the CURLMsg reading discipline (msgs_in_queue must count
 * down exactly), and the report.
 *
 * Report, on stdout, one line per transfer in input order:
 *   <url> result=<CURLcode|-1> status=<http> body_sha256=<hex> len=<n> done=<n> status_lines=<n>
 *         t_ms=<wall ms at its DONE> cpu_ms=<process CPU ms at its DONE>
 * then one line
 *   summary transfers=<n> done_total=<n> cpu_s=<user+sys> wall_s=<s> loops=<event loop turns>
 * Every broken invariant is printed on stderr as `CHECK FAILED: ...` and makes the exit status 1
 * (a handle with a DONE count other than one, a CURLMsg for a handle we never added, a
 * msgs_in_queue that does not count down, a loop that stalls). Exit 2: usage or setup error.
 *
 * URL arguments: each argument is a URL, or @FILE for a file with one URL per line.
 *
 * Debugging by hand: MULTI_HOST_VERBOSE=1 sets CURLOPT_VERBOSE on every handle;
 * MULTI_HOST_TRACE=1 makes the socket-action hosts log each timer callback and firing on stderr.
 */
#ifndef CURLRETRY_MULTI_HOST_COMMON_H
#define CURLRETRY_MULTI_HOST_COMMON_H

#include <curl/curl.h>

#include <stddef.h>
#include <stdint.h>

extern int g_failed;

#include "host_support.h"

struct sha256 {
  uint32_t h[8];
  uint64_t bytes;
  unsigned char block[64];
  size_t used;
};

void sha256_init(struct sha256* s);
void sha256_update(struct sha256* s, const void* data, size_t n);
void sha256_hex(struct sha256* s, char out[65]);

struct transfer {
  size_t index;
  char* url;
  CURL* easy;
  struct sha256 body;
  uint64_t len;
  int done;          /* CURLMSG_DONE messages seen for this handle */
  int result;        /* from the DONE message; -1 when none was read */
  long status;       /* CURLINFO_RESPONSE_CODE, read at DONE (or at the end) */
  int status_lines;  /* "HTTP/" lines the header callback saw */
  double t_ms;       /* wall ms since start at DONE (never-read: at the last body byte) */
  double cpu_ms;     /* process CPU ms at that moment */
  int finished;
};

struct host {
  const char* name;
  struct transfer* t;
  size_t n;
  double start_ms;
  long loops;
  size_t next;       /* next transfer to add (rolling) */
  size_t completed;  /* transfers whose DONE was read */
};

double now_ms(void);
double cpu_ms(void);

/* Loads the URLs in argv[first..argc) (@FILE reads a list). Exit 2 on error. */
void host_init(struct host* h, const char* name, int argc, char** argv, int first);
/* A fresh easy handle for transfer i: URL, write/header callbacks into the record, PRIVATE. */
CURL* host_easy(struct host* h, size_t i);
/* Adds transfer h->next to `multi` and advances; returns 0 when none is left. */
int host_add_next(struct host* h, CURLM* multi);

/* Reads every queued message, checking that msgs_in_queue counts down to 0 and that a NULL
 * follows it. For each DONE: records it, removes the handle (and cleans it up when `cleanup`).
 * Returns how many DONE messages were read. */
size_t host_read_messages(struct host* h, CURLM* multi, int cleanup);

/* Prints the report; checks that every transfer got exactly one DONE when `require_done`.
 * Returns the exit status. */
int host_report(struct host* h, int require_done);

/* Kills the process loudly if it runs longer than `seconds` (a stalled loop). */
void host_watchdog(unsigned seconds);

#endif
