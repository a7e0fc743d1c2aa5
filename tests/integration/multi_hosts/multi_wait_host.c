/* multi_wait_host: the curl_multi_perform + curl_multi_wait loop that PHP's curl_multi_exec /
 * curl_multi_select pair amounts to. Knows nothing of curlretry.
 *
 * usage: multi_wait_host URL|@FILE...
 * All transfers are added up front; messages are read inside the loop after each perform. The
 * wait timeout is 10 s: curl_multi_wait returns at once when libcurl has no socket to wait on,
 * so a parked transfer must neither make this loop spin nor sleep past its due time.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "host_common.h"

#define WAIT_TIMEOUT_MS 10000

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: multi_wait_host URL|@FILE...\n");
    return 2;
  }
  host_watchdog(120);
  struct host h;
  host_init(&h, "multi_wait_host", argc, argv, 1);
  CURLM* multi = curl_multi_init();
  if (!multi) return 2;
  while (host_add_next(&h, multi)) {
  }
  int running = 0;
  do {
    CURLMcode mc = curl_multi_perform(multi, &running);
    CHECK(mc == CURLM_OK, "curl_multi_perform = %d", (int)mc);
    if (mc != CURLM_OK) break;
    host_read_messages(&h, multi, 0);
    if (running) {
      int numfds = 0;
      mc = curl_multi_wait(multi, NULL, 0, WAIT_TIMEOUT_MS, &numfds);
      CHECK(mc == CURLM_OK, "curl_multi_wait = %d", (int)mc);
      h.loops++;
    }
  } while (running);
  curl_multi_cleanup(multi);
  return host_report(&h, 1);
}
