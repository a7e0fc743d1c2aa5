/* fdset_host: the curl_multi_fdset + select + curl_multi_timeout loop of git's http.c and of
 * libcurl's older examples. Knows nothing of curlretry.
 *
 * usage: fdset_host URL|@FILE...
 * All transfers are added up front; messages are read inside the loop. The select timeout is
 * what curl_multi_timeout says (10 s when it says -1), taken literally even when fdset offers
 * no descriptor: while every transfer is parked libcurl has no socket and no timer of its own,
 * and only a clamped curl_multi_timeout wakes this loop on time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>

#include "host_common.h"

#define NO_TIMEOUT_MS 10000

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fdset_host URL|@FILE...\n");
    return 2;
  }
  host_watchdog(120);
  struct host h;
  host_init(&h, "fdset_host", argc, argv, 1);
  CURLM* multi = curl_multi_init();
  if (!multi) return 2;
  while (host_add_next(&h, multi)) {
  }
  int running = 0;
  CURLMcode mc = curl_multi_perform(multi, &running);
  CHECK(mc == CURLM_OK, "curl_multi_perform = %d", (int)mc);
  host_read_messages(&h, multi, 0);
  while (running && mc == CURLM_OK) {
    long timeout_ms = -1;
    mc = curl_multi_timeout(multi, &timeout_ms);
    CHECK(mc == CURLM_OK, "curl_multi_timeout = %d", (int)mc);
    if (timeout_ms < 0) timeout_ms = NO_TIMEOUT_MS;
    if (timeout_ms > 0) {
      fd_set r, w, x;
      FD_ZERO(&r);
      FD_ZERO(&w);
      FD_ZERO(&x);
      int max_fd = -1;
      mc = curl_multi_fdset(multi, &r, &w, &x, &max_fd);
      CHECK(mc == CURLM_OK, "curl_multi_fdset = %d", (int)mc);
      struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
      int rc = select(max_fd + 1, &r, &w, &x, &tv);
      CHECK(rc >= 0 || errno == EINTR, "select: %s", strerror(errno));
    }
    h.loops++;
    mc = curl_multi_perform(multi, &running);
    CHECK(mc == CURLM_OK, "curl_multi_perform = %d", (int)mc);
    host_read_messages(&h, multi, 0);
  }
  curl_multi_cleanup(multi);
  return host_report(&h, 1);
}
