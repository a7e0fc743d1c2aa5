/* multi_poll_host: the curl_multi_perform + curl_multi_poll loop of curl's own examples and of
 * `curl --parallel`. Knows nothing of curlretry.
 *
 * usage: multi_poll_host MODE URL|@FILE...
 *   inside       all transfers added up front; messages read inside the loop after each perform
 *   late-read    messages read only once still_running reached 0
 *   never-read   curl_multi_info_read is never called: the loop ends on still_running == 0 and
 *                the bodies come from the write callback (result=-1, done=0 in the report)
 *   rolling:N    N transfers in flight; each DONE (read inside the loop) is removed, cleaned up
 *                and replaced by the next URL
 *   abandon:MS   like inside, but after MS ms every unfinished transfer is removed; then one more
 *                perform must say running=0 and no message may be queued
 *   abandon-cleanup:MS   like inside, but after MS ms curl_multi_cleanup with the unfinished
 *                transfers still added; then each of them is run again with curl_easy_perform
 *                (its result in the report; done stays 0)
 * The poll timeout is 10 s on purpose: a loop that relied on it to notice a parked transfer
 * would show up as a slow run, not as a slightly late one.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_common.h"

#define POLL_TIMEOUT_MS 10000

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: multi_poll_host inside|late-read|never-read|rolling:N|abandon:MS|abandon-cleanup:MS "
                    "URL|@FILE...\n");
    return 2;
  }
  const char* mode = argv[1];
  size_t in_flight = 0;
  long abandon_ms = 0;
  int late = strcmp(mode, "late-read") == 0, never = strcmp(mode, "never-read") == 0;
  int abandon_cleanup = strncmp(mode, "abandon-cleanup:", 16) == 0;
  if (strncmp(mode, "rolling:", 8) == 0) {
    in_flight = strtoul(mode + 8, NULL, 10);
    if (in_flight == 0) return 2;
  } else if (strncmp(mode, "abandon:", 8) == 0 || abandon_cleanup) {
    abandon_ms = strtol(strchr(mode, ':') + 1, NULL, 10);
    if (abandon_ms <= 0) return 2;
  } else if (!late && !never && strcmp(mode, "inside") != 0) {
    fprintf(stderr, "multi_poll_host: unknown mode %s\n", mode);
    return 2;
  }
  host_watchdog(120);
  struct host h;
  host_init(&h, "multi_poll_host", argc, argv, 2);
  CURLM* multi = curl_multi_init();
  if (!multi) return 2;
  size_t first = in_flight ? (in_flight < h.n ? in_flight : h.n) : h.n;
  for (size_t i = 0; i < first; i++) host_add_next(&h, multi);

  for (;;) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    CHECK(mc == CURLM_OK, "curl_multi_perform = %d", (int)mc);
    if (mc != CURLM_OK) break;
    size_t added = 0;
    if (!late && !never) {
      size_t finished = host_read_messages(&h, multi, in_flight != 0);
      if (in_flight)
        for (size_t i = 0; i < finished; i++) added += (size_t)host_add_next(&h, multi);
    }
    if (running == 0 && added == 0) break;
    if (added) continue;  /* start them now */
    int timeout_ms = POLL_TIMEOUT_MS;
    if (abandon_ms) {
      double left = abandon_ms - (now_ms() - h.start_ms);
      if (left <= 0) break;
      if (left < timeout_ms) timeout_ms = (int)left + 1;
    }
    int numfds = 0;
    mc = curl_multi_poll(multi, NULL, 0, timeout_ms, &numfds);
    CHECK(mc == CURLM_OK, "curl_multi_poll = %d", (int)mc);
    h.loops++;
  }
  CHECK(h.next == h.n, "the loop ended with %zu transfers never added", h.n - h.next);

  if (abandon_ms && !abandon_cleanup) {
    for (size_t i = 0; i < h.n; i++) {
      if (h.t[i].finished) continue;
      CURLMcode mc = curl_multi_remove_handle(multi, h.t[i].easy);
      CHECK(mc == CURLM_OK, "curl_multi_remove_handle(%s) of an unfinished transfer = %d", h.t[i].url, (int)mc);
    }
    int running = -1;
    CURLMcode mc = curl_multi_perform(multi, &running);
    CHECK(mc == CURLM_OK && running == 0, "perform after removing every transfer: %d, running=%d", (int)mc, running);
    int left = -1;
    CHECK(curl_multi_info_read(multi, &left) == NULL, "a message for a removed transfer");
  } else if (abandon_cleanup) {
    CURLMcode mc = curl_multi_cleanup(multi);
    CHECK(mc == CURLM_OK, "curl_multi_cleanup with transfers still added = %d", (int)mc);
    multi = NULL;
    for (size_t i = 0; i < h.n; i++) {
      struct transfer* t = &h.t[i];
      if (t->finished) continue;
      t->result = (int)curl_easy_perform(t->easy);
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->status);
      t->t_ms = now_ms() - h.start_ms;
      t->cpu_ms = cpu_ms();
    }
  } else if (late) {
    host_read_messages(&h, multi, 0);
  } else if (never) {
    for (size_t i = 0; i < h.n; i++) {
      struct transfer* t = &h.t[i];
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->status);
      t->t_ms = now_ms() - h.start_ms;
      t->cpu_ms = cpu_ms();
      curl_multi_remove_handle(multi, t->easy);
    }
  } else {
    /* The loop ended on running == 0: nothing may be left to read. */
    int left = -1;
    CURLMsg* msg = curl_multi_info_read(multi, &left);
    CHECK(msg == NULL, "a message was still queued after running reached 0 and the queue was drained");
  }
  if (multi) curl_multi_cleanup(multi);
  return host_report(&h, !never && !abandon_ms);
}
