/* An ordinary libcurl program for test_callback_parity.py (issue 18): each mode uses a libcurl
 * callback the way one of curl's own tests does, and prints what the program saw, in order, so
 * that a run under the preload can be compared byte for byte with a run without it. It knows
 * nothing of curlretry.
 *
 * usage: callback_host hsts|closesocket|pause-upload URL
 *   hsts          an HSTS read callback over a two-entry list (curl test 1915): prints how often
 *                 libcurl called it, then the transfer's result
 *   closesocket   header, body and close-socket callbacks (curl test 585): prints each event
 *   pause-upload  a POST whose read callback pauses until the write callback sees the response
 *                 body (curl test 1533)
 * Every mode is bounded by alarm(): a hang ends the process with SIGALRM.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int hsts_calls;
static int hsts_index;

static CURLSTScode hsts_read(CURL* easy, struct curl_hstsentry* e, void* userp) {
  static const char* const names[] = {"one.example", "two.example"};
  (void)easy;
  (void)userp;
  ++hsts_calls;
  /* Like test 1915's iterator: past the end of its list only because it is asked again. */
  if (hsts_index >= 2) return CURLSTS_DONE;
  strcpy(e->name, names[hsts_index++]);
  e->includeSubDomains = 0;
  strcpy(e->expire, "20370320 01:02:03");
  return CURLSTS_OK;
}

static int mode_hsts(const char* url) {
  CURL* easy = curl_easy_init();
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_HSTS_CTRL, (long)CURLHSTS_ENABLE);
  curl_easy_setopt(easy, CURLOPT_HSTSREADFUNCTION, hsts_read);
  CURLcode rc = curl_easy_perform(easy);
  printf("hsts-read calls=%d\nresult=%d\n", hsts_calls, (int)rc);
  curl_easy_cleanup(easy);
  return 0;
}

static size_t print_header(char* data, size_t size, size_t n, void* userp) {
  (void)userp;
  printf("H: %.*s", (int)(size * n), data);
  return size * n;
}

static size_t print_body(char* data, size_t size, size_t n, void* userp) {
  (void)userp;
  printf("B: %.*s\n", (int)(size * n), data);
  return size * n;
}

static int print_close(void* userp, curl_socket_t fd) {
  (void)userp;
  printf("[CLOSE]\n");
  return close(fd);
}

static int mode_closesocket(const char* url) {
  CURL* easy = curl_easy_init();
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, print_header);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, print_body);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, print_close);
  CURLcode rc = curl_easy_perform(easy);
  printf("result=%d\n", (int)rc);
  curl_easy_cleanup(easy);
  return 0;
}

struct upload {
  CURL* easy;
  size_t left;
  int paused;
  int got_body;
};

static size_t paused_read(char* buf, size_t size, size_t n, void* userp) {
  struct upload* u = userp;
  if (!u->got_body) {
    u->paused = 1;
    return CURL_READFUNC_PAUSE;
  }
  size_t len = size * n < u->left ? size * n : u->left;
  memset(buf, 'a', len);
  u->left -= len;
  return len;
}

static size_t unpausing_write(char* data, size_t size, size_t n, void* userp) {
  struct upload* u = userp;
  (void)data;
  u->got_body = 1;
  if (u->paused) {
    u->paused = 0;
    curl_easy_pause(u->easy, CURLPAUSE_CONT);
  }
  printf("body %zu bytes\n", size * n);
  return size * n;
}

static int mode_pause_upload(const char* url) {
  struct upload u = {curl_easy_init(), 4096, 0, 0};
  curl_easy_setopt(u.easy, CURLOPT_URL, url);
  curl_easy_setopt(u.easy, CURLOPT_POST, 1L);
  curl_easy_setopt(u.easy, CURLOPT_POSTFIELDSIZE, 4096L);
  curl_easy_setopt(u.easy, CURLOPT_READFUNCTION, paused_read);
  curl_easy_setopt(u.easy, CURLOPT_READDATA, &u);
  curl_easy_setopt(u.easy, CURLOPT_WRITEFUNCTION, unpausing_write);
  curl_easy_setopt(u.easy, CURLOPT_WRITEDATA, &u);
  CURLcode rc = curl_easy_perform(u.easy);
  long status = 0;
  curl_easy_getinfo(u.easy, CURLINFO_RESPONSE_CODE, &status);
  printf("result=%d status=%ld\n", (int)rc, status);
  curl_easy_cleanup(u.easy);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: callback_host hsts|closesocket|pause-upload URL\n");
    return 2;
  }
  alarm(20);
  setvbuf(stdout, NULL, _IOLBF, 0);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 2;
  if (strcmp(argv[1], "hsts") == 0) rc = mode_hsts(argv[2]);
  else if (strcmp(argv[1], "closesocket") == 0) rc = mode_closesocket(argv[2]);
  else if (strcmp(argv[1], "pause-upload") == 0) rc = mode_pause_upload(argv[2]);
  else fprintf(stderr, "callback_host: unknown mode %s\n", argv[1]);
  curl_global_cleanup();
  return rc;
}
