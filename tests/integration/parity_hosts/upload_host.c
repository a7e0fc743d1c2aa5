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
 *   upload_host mimecb-seek URL SIZE  the same part with a seek callback (counted in seeks=)
 *   upload_host mimecb-nested URL SIZE  the part of unknown size (-1: chunked), no seek, inside a
 *                                     curl_mime_subparts mime, after a plain curl_mime_data part,
 *                                     with a free callback (counted in frees=)
 *   upload_host mimecb-multi URL SIZE the mimecb part, driven by curl_multi_perform/poll
 *   upload_host mimecb-dup URL SIZE   the mimecb part, sent by a curl_easy_duphandle copy of the
 *                                     handle (libcurl copies the body's parts for it)
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
  int seeks;
  int frees;
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

static int seek_source(void* userdata, curl_off_t offset, int origin) {
  struct source* s = userdata;
  s->seeks++;
  if (origin != SEEK_SET || offset < 0 || offset > s->size) return CURL_SEEKFUNC_FAIL;
  s->pos = offset;
  s->eof_returned = 0;
  return CURL_SEEKFUNC_OK;
}

static void free_source(void* userdata) {
  struct source* s = userdata;
  s->frees++;
}

// The multipart boundary libcurl chose (it is random), read from the request it sent, so that
// the test can rebuild the exact body the server should have received.
static char g_boundary[128];

static int debug_boundary(CURL* easy, curl_infotype type, char* data, size_t size, void* userdata) {
  (void)easy;
  (void)userdata;
  static const char key[] = "boundary=";
  if (type != CURLINFO_HEADER_OUT) return 0;
  for (size_t i = 0; i + sizeof key - 1 < size; ++i) {
    if (memcmp(data + i, key, sizeof key - 1) != 0) continue;
    size_t n = 0;
    for (i += sizeof key - 1; i < size && n + 1 < sizeof g_boundary && data[i] != '\r' && data[i] != '\n'; ++i)
      g_boundary[n++] = data[i];
    g_boundary[n] = 0;
    break;
  }
  return 0;
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
  fprintf(stderr, "reads=%d read_bytes=%lld after_eof=%d ioctls=%d wrong_userdata=%d seeks=%d\n", g_source.reads,
          g_source.read_bytes, g_source.after_eof, g_source.ioctls, g_source.wrong_userdata, g_source.seeks);
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

static CURLcode perform_multi(CURL* easy) {
  CURLM* multi = curl_multi_init();
  curl_multi_add_handle(multi, easy);
  int running = 1;
  CURLcode code = CURLE_FAILED_INIT;
  for (int rounds = 0; running && rounds < 100000; ++rounds) {
    curl_multi_perform(multi, &running);
    if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
  }
  int left = 0;
  CURLMsg* msg;
  while ((msg = curl_multi_info_read(multi, &left)) != NULL)
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) code = msg->data.result;
  curl_multi_remove_handle(multi, easy);
  curl_multi_cleanup(multi);
  return code;
}

static int mode_mimecb(const char* url, const char* how) {
  CURL* easy = curl_easy_init();
  curl_mime* mime = curl_mime_init(easy);
  const int nested = strcmp(how, "mimecb-nested") == 0;
  curl_mime* holder = mime;
  if (nested) {
    curl_mimepart* plain = curl_mime_addpart(mime);
    curl_mime_name(plain, "plain");
    curl_mime_data(plain, "text", CURL_ZERO_TERMINATED);
    curl_mimepart* alternative = curl_mime_addpart(mime);
    curl_mime_name(alternative, "inner");
    holder = curl_mime_init(easy);
    CHECK(curl_mime_subparts(alternative, holder) == CURLE_OK, "curl_mime_subparts");
  }
  curl_mimepart* part = curl_mime_addpart(holder);
  curl_mime_name(part, "stream");
  curl_mime_data_cb(part, nested ? (curl_off_t)-1 : (curl_off_t)g_source.size, read_source,
                    strcmp(how, "mimecb-seek") == 0 ? seek_source : NULL, nested ? free_source : NULL,
                    &g_source);
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_stdout);
  curl_easy_setopt(easy, CURLOPT_MIMEPOST, mime);
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, debug_boundary);
  curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
  if (strcmp(how, "mimecb-dup") == 0) {
    CURL* twin = curl_easy_duphandle(easy);
    curl_easy_cleanup(easy);
    easy = twin;
  }
  CURLcode code = strcmp(how, "mimecb-multi") == 0 ? perform_multi(easy) : curl_easy_perform(easy);
  report(easy, code);
  curl_easy_cleanup(easy);
  curl_mime_free(mime);
  fprintf(stderr, "boundary=%s\n", g_boundary);
  if (nested) fprintf(stderr, "frees=%d\n", g_source.frees);
  return g_failed;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: upload_host ioctl|formstream|mimecb[-seek|-nested|-multi] URL SIZE\n");
    return 2;
  }
  g_source.size = atoll(argv[3]);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 2;
  if (strcmp(argv[1], "ioctl") == 0) rc = mode_ioctl(argv[2]);
  else if (strcmp(argv[1], "formstream") == 0) rc = mode_formstream(argv[2]);
  else if (strncmp(argv[1], "mimecb", 6) == 0) rc = mode_mimecb(argv[2], argv[1]);
  else fprintf(stderr, "unknown mode %s\n", argv[1]);
  curl_global_cleanup();
  return rc;
}
