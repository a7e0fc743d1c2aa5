/* multi_moves_host: easy handles that move between multi handles and outlive them, the way
 * long-lived programs shuffle them, with every transfer's first attempt failing:
 *
 *   1. handle H1 runs URL1 in multi A; the host removes it after its DONE;
 *   2. H1 runs URL2 in multi B, and is never removed from B;
 *   3. multi A is cleaned up (H1 now belongs to B); H3 runs URL3 in a fresh multi C;
 *   4. H1 is cleaned up while still added to B;
 *   5. H2 runs URL4 in B and stays added; B is cleaned up; H2 then runs URL5 with
 *      curl_easy_perform;
 *   6. H4 runs URL6 (whose first answer asks for a wait) in multi D; 300 ms in, while its
 *      transfer waits outside libcurl, adding it again to D or to multi E must fail with
 *      CURLM_ADDED_ALREADY, as it would without curlretry; it then finishes in D;
 *   7. H5 starts URL7 (an answer that takes seconds) in multi F; 300 ms in, still in flight, F is
 *      cleaned up; H5 then runs URL8 with curl_easy_perform (retried like any other transfer).
 *
 * usage: multi_moves_host URL1 URL2 URL3 URL4 URL5 URL6 URL7 URL8
 * Prints one line per transfer, `<url> result=<CURLcode> status=<http> len=<body bytes>`.
 * Every broken invariant is `CHECK FAILED: ...` on stderr and exit status 1; exit 2: usage.
 */
#include <curl/curl.h>

#include <stdio.h>
#include <string.h>

#include "host_common.h"

static size_t count_body(char* data, size_t size, size_t nmemb, void* userdata) {
  (void)data;
  *(size_t*)userdata += size * nmemb;
  return size * nmemb;
}

static size_t g_len;

static CURL* make_easy(void) {
  CURL* easy = curl_easy_init();
  if (easy == NULL) {
    fprintf(stderr, "curl_easy_init failed\n");
    exit(2);
  }
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, count_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void*)&g_len);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 20000L);
  return easy;
}

static void report(const char* url, CURL* easy, int result) {
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  printf("%s result=%d status=%ld len=%zu\n", url, result, status, g_len);
  fflush(stdout);
}

/* Runs `easy` (already set up for `url`) in `multi` until its one DONE; does not remove it. */
static void run_in(CURLM* multi, CURL* easy, const char* url) {
  g_len = 0;
  curl_easy_setopt(easy, CURLOPT_URL, url);
  CURLMcode mc = curl_multi_add_handle(multi, easy);
  CHECK(mc == CURLM_OK, "curl_multi_add_handle(%s) = %d", url, (int)mc);
  int done = 0, result = -1;
  for (int turn = 0; turn < 100000 && !done; turn++) {
    int running = 0;
    mc = curl_multi_perform(multi, &running);
    CHECK(mc == CURLM_OK, "curl_multi_perform = %d", (int)mc);
    int left = 0;
    CURLMsg* msg;
    while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
      CHECK(msg->msg == CURLMSG_DONE && msg->easy_handle == easy, "a message for another handle");
      result = (int)msg->data.result;
      done++;
    }
    if (done || running == 0) break;
    curl_multi_poll(multi, NULL, 0, 1000, NULL);
  }
  CHECK(done == 1, "%s: %d DONE messages", url, done);
  report(url, easy, result);
}

/* Step 6: the handle is added once, however long its transfer waits between attempts. */
static void readd_while_waiting(const char* url) {
  CURLM* d = curl_multi_init();
  CURLM* e = curl_multi_init();
  if (d == NULL || e == NULL) exit(2);
  CURL* h = make_easy();
  g_len = 0;
  curl_easy_setopt(h, CURLOPT_URL, url);
  CHECK(curl_multi_add_handle(d, h) == CURLM_OK, "add H4 to D");
  double start = now_ms();
  int done = 0, result = -1, checked = 0;
  for (int turn = 0; turn < 100000 && !done; turn++) {
    int running = 0;
    CHECK(curl_multi_perform(d, &running) == CURLM_OK, "perform D");
    int left = 0;
    CURLMsg* msg;
    while ((msg = curl_multi_info_read(d, &left)) != NULL) {
      result = (int)msg->data.result;
      done++;
    }
    if (!checked && now_ms() - start >= 300) {
      checked = 1;
      CURLMcode again = curl_multi_add_handle(d, h);
      CHECK(again == CURLM_ADDED_ALREADY, "adding H4 to D again while it waits = %d", (int)again);
      CURLMcode other = curl_multi_add_handle(e, h);
      CHECK(other == CURLM_ADDED_ALREADY, "adding H4 to E while it waits in D = %d", (int)other);
    }
    if (done || running == 0) break;
    curl_multi_poll(d, NULL, 0, 100, NULL);
  }
  CHECK(checked, "H4 finished before the 300 ms check");
  CHECK(done == 1, "%s: %d DONE messages", url, done);
  report(url, h, result);
  curl_multi_remove_handle(d, h);
  curl_easy_cleanup(h);
  curl_multi_cleanup(e);
  curl_multi_cleanup(d);
}

/* Step 7: a multi cleaned up under a transfer in flight gives the handle back whole. */
static void cleanup_in_flight(const char* slow_url, const char* url) {
  CURLM* f = curl_multi_init();
  if (f == NULL) exit(2);
  CURL* h = make_easy();
  curl_easy_setopt(h, CURLOPT_URL, slow_url);
  CHECK(curl_multi_add_handle(f, h) == CURLM_OK, "add H5 to F");
  double start = now_ms();
  int running = 1;
  while (running > 0 && now_ms() - start < 300) {
    CHECK(curl_multi_perform(f, &running) == CURLM_OK, "perform F");
    curl_multi_poll(f, NULL, 0, 50, NULL);
  }
  CHECK(running == 1, "H5 was not in flight after 300 ms (running=%d)", running);
  CHECK(curl_multi_cleanup(f) == CURLM_OK, "curl_multi_cleanup(F) with H5 in flight");
  g_len = 0;
  curl_easy_setopt(h, CURLOPT_URL, url);
  int result = (int)curl_easy_perform(h);
  report(url, h, result);
  curl_easy_cleanup(h);
}

int main(int argc, char** argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: multi_moves_host URL1 URL2 URL3 URL4 URL5 URL6 URL7 URL8\n");
    return 2;
  }
  host_watchdog(60);
  CURLM* a = curl_multi_init();
  CURLM* b = curl_multi_init();
  if (a == NULL || b == NULL) return 2;

  CURL* h1 = make_easy();
  run_in(a, h1, argv[1]);
  CHECK(curl_multi_remove_handle(a, h1) == CURLM_OK, "remove H1 from A");
  run_in(b, h1, argv[2]);

  CHECK(curl_multi_cleanup(a) == CURLM_OK, "curl_multi_cleanup(A)");
  CURLM* c = curl_multi_init();
  CURL* h3 = make_easy();
  run_in(c, h3, argv[3]);
  CHECK(curl_multi_remove_handle(c, h3) == CURLM_OK, "remove H3 from C");
  curl_easy_cleanup(h3);
  curl_multi_cleanup(c);

  curl_easy_cleanup(h1); /* still added to B */

  CURL* h2 = make_easy();
  run_in(b, h2, argv[4]);
  CHECK(curl_multi_cleanup(b) == CURLM_OK, "curl_multi_cleanup(B) with H2 added");
  g_len = 0;
  curl_easy_setopt(h2, CURLOPT_URL, argv[5]);
  int result = (int)curl_easy_perform(h2);
  report(argv[5], h2, result);
  curl_easy_cleanup(h2);

  readd_while_waiting(argv[6]);
  cleanup_in_flight(argv[7], argv[8]);
  return g_failed ? 1 : 0;
}
