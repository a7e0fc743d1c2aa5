/* What libcurl reports about a transfer, and a transfer libcurl does not run, for
 * test_parity_hosts.py (issue 11 §9):
 *
 *   info_host header-size URL     CURLOPT_HEADER=1 (headers in the body stream); prints the body
 *                                 stream, then header_size=, request_size=, status=
 *   info_host connect-only URL    CURLOPT_CONNECT_ONLY=1, then a GET by curl_easy_send and the
 *                                 answer by curl_easy_recv until the server closes; prints what
 *                                 was received, then status= (libcurl has none: 0)
 *
 * stdout: the bytes; stderr: result=<CURLcode> and the values. Knows nothing of curlretry. */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>

static int g_failed;
#include "host_support.h"

static size_t write_stdout(char* data, size_t size, size_t nmemb, void* userdata) {
  (void)userdata;
  return fwrite(data, size, nmemb, stdout);
}

static int mode_header_size(const char* url) {
  CURL* easy = curl_easy_init();
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_HEADER, 1L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  CURLcode code = curl_easy_perform(easy);
  long header_size = 0, request_size = 0, status = 0;
  curl_easy_getinfo(easy, CURLINFO_HEADER_SIZE, &header_size);
  curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &request_size);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  fflush(stdout);
  fprintf(stderr, "result=%d header_size=%ld request_size=%ld status=%ld\n", (int)code, header_size, request_size,
          status);
  curl_easy_cleanup(easy);
  return g_failed;
}

static int wait_socket(curl_socket_t fd, int for_recv) {
  fd_set set;
  FD_ZERO(&set);
  FD_SET(fd, &set);
  struct timeval tv = {10, 0};
  return select((int)fd + 1, for_recv ? &set : NULL, for_recv ? NULL : &set, NULL, &tv);
}

static int mode_connect_only(const char* url, const char* path) {
  CURL* easy = curl_easy_init();
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_CONNECT_ONLY, 1L);
  CURLcode code = curl_easy_perform(easy);
  fprintf(stderr, "result=%d\n", (int)code);
  if (code != CURLE_OK) return 1;
  curl_socket_t fd = CURL_SOCKET_BAD;
  curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &fd);
  CHECK(fd != CURL_SOCKET_BAD, "no active socket");
  char request[512];
  snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
  size_t sent_total = 0;
  while (sent_total < strlen(request)) {
    size_t sent = 0;
    code = curl_easy_send(easy, request + sent_total, strlen(request) - sent_total, &sent);
    if (code == CURLE_AGAIN && wait_socket(fd, 0) > 0) continue;
    if (code != CURLE_OK) break;
    sent_total += sent;
  }
  CHECK(code == CURLE_OK, "curl_easy_send: %d", (int)code);
  for (int rounds = 0; rounds < 10000; ++rounds) {
    char buffer[4096];
    size_t got = 0;
    code = curl_easy_recv(easy, buffer, sizeof buffer, &got);
    if (code == CURLE_AGAIN) {
      if (wait_socket(fd, 1) <= 0) break;
      continue;
    }
    if (code != CURLE_OK || got == 0) break;
    fwrite(buffer, 1, got, stdout);
  }
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  fflush(stdout);
  fprintf(stderr, "recv_result=%d status=%ld\n", (int)code, status);
  curl_easy_cleanup(easy);
  return g_failed;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: info_host header-size URL | connect-only URL PATH\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 2;
  if (strcmp(argv[1], "header-size") == 0) rc = mode_header_size(argv[2]);
  else if (strcmp(argv[1], "connect-only") == 0 && argc == 4) rc = mode_connect_only(argv[2], argv[3]);
  else fprintf(stderr, "unknown mode %s\n", argv[1]);
  curl_global_cleanup();
  return rc;
}
