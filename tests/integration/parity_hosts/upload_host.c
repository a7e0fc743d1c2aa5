/* Uploads through the older libcurl callbacks, for test_parity_uploads.py (issue 18 §1, §2):
 *
 *   upload_host ioctl URL SIZE        POST SIZE pattern bytes from a read callback that rewinds
 *                                     only through CURLOPT_IOCTLFUNCTION (no seek callback), with
 *                                     CURLOPT_FOLLOWLOCATION, as curl tests 547/551/552/555 do
 *   upload_host formstream URL SIZE   multipart POST with one curl_formadd(CURLFORM_STREAM) part
 *                                     of SIZE bytes read by the read callback (curl tests 554,
 *                                     672, 673): libcurl passes the part's own pointer as userdata
 *   upload_host mimecb URL SIZE       CURLOPT_MIMEPOST with one curl_mime_data_cb part of SIZE
 *                                     bytes, a read callback and no seek callback
 *
 * stdout: the response body. stderr, one per line: result=<CURLcode> status=<code>, then
 * reads=<calls> read_bytes=<n> after_eof=<reads after returning 0> ioctls=<n> wrong_userdata=<n>.
 * The program knows nothing of curlretry. Exit 0 unless a CHECK failed. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failed;
#include "host_support.h"

struct source {
  long long size;
  long long pos;
  int reads;
  long long read_bytes;
  int eof_returned;
  int after_eof;
  int ioctls;
  int wrong_userdata;
};

static struct source g_source;

static size_t read_source(char* buffer, size_t size, size_t nitems, void* userdata) {
  struct source* s = userdata;
  if (s != &g_source) {
    g_source.wrong_userdata++;
    return CURL_READFUNC_ABORT;
  }
  s->reads++;
  if (s->eof_returned) s->after_eof++;
  size_t want = size * nitems;
  size_t n = 0;
  while (n < want && s->pos < s->size) buffer[n++] = (char)('A' + (s->pos++ % 26));
  s->read_bytes += (long long)n;
  if (n == 0) s->eof_returned = 1;
  return n;
}

static curlioerr ioctl_source(CURL* easy, int cmd, void* userdata) {
  (void)easy;
  struct source* s = userdata;
  s->ioctls++;
  if (cmd != CURLIOCMD_RESTARTREAD) return CURLIOE_UNKNOWNCMD;
  s->pos = 0;
  s->eof_returned = 0;
  return CURLIOE_OK;
}

static size_t write_stdout(char* data, size_t size, size_t nmemb, void* userdata) {
  (void)userdata;
  return fwrite(data, size, nmemb, stdout);
}

static void report(CURL* easy, CURLcode code) {
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  fflush(stdout);
  fprintf(stderr, "result=%d status=%ld\n", (int)code, status);
  fprintf(stderr, "reads=%d read_bytes=%lld after_eof=%d ioctls=%d wrong_userdata=%d\n", g_source.reads,
          g_source.read_bytes, g_source.after_eof, g_source.ioctls, g_source.wrong_userdata);
}

static int mode_ioctl(const char* url) {
  CURL* easy = curl_easy_init();
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)g_source.size);
  curl_easy_setopt(easy, CURLOPT_READFUNCTION, read_source);
  curl_easy_setopt(easy, CURLOPT_READDATA, &g_source);
  curl_easy_setopt(easy, CURLOPT_IOCTLFUNCTION, ioctl_source);
  curl_easy_setopt(easy, CURLOPT_IOCTLDATA, &g_source);
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  CURLcode code = curl_easy_perform(easy);
  report(easy, code);
  curl_easy_cleanup(easy);
  return g_failed;
}

static int mode_formstream(const char* url) {
  CURL* easy = curl_easy_init();
  struct curl_httppost* first = NULL;
  struct curl_httppost* last = NULL;
  CURLFORMcode f = curl_formadd(&first, &last, CURLFORM_COPYNAME, "stream", CURLFORM_STREAM, &g_source,
                                CURLFORM_CONTENTLEN, (curl_off_t)g_source.size, CURLFORM_CONTENTTYPE,
                                "application/octet-stream", CURLFORM_END);
  CHECK(f == CURL_FORMADD_OK, "curl_formadd: %d", (int)f);
  f = curl_formadd(&first, &last, CURLFORM_COPYNAME, "plain", CURLFORM_COPYCONTENTS, "text", CURLFORM_END);
  CHECK(f == CURL_FORMADD_OK, "curl_formadd: %d", (int)f);
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_READFUNCTION, read_source);
  curl_easy_setopt(easy, CURLOPT_HTTPPOST, first);
  CURLcode code = curl_easy_perform(easy);
  report(easy, code);
  curl_easy_cleanup(easy);
  curl_formfree(first);
  return g_failed;
}

static int mode_mimecb(const char* url) {
  CURL* easy = curl_easy_init();
  curl_mime* mime = curl_mime_init(easy);
  curl_mimepart* part = curl_mime_addpart(mime);
  curl_mime_name(part, "stream");
  curl_mime_data_cb(part, (curl_off_t)g_source.size, read_source, NULL, NULL, &g_source);
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_MIMEPOST, mime);
  CURLcode code = curl_easy_perform(easy);
  report(easy, code);
  curl_easy_cleanup(easy);
  curl_mime_free(mime);
  return g_failed;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: upload_host ioctl|formstream|mimecb URL SIZE\n");
    return 2;
  }
  g_source.size = atoll(argv[3]);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 2;
  if (strcmp(argv[1], "ioctl") == 0) rc = mode_ioctl(argv[2]);
  else if (strcmp(argv[1], "formstream") == 0) rc = mode_formstream(argv[2]);
  else if (strcmp(argv[1], "mimecb") == 0) rc = mode_mimecb(argv[2]);
  else fprintf(stderr, "unknown mode %s\n", argv[1]);
  curl_global_cleanup();
  return rc;
}
