/* An ordinary libcurl program for test_libcurl_parity.py (issue 25): each scenario has one of
 * the program's callbacks refuse (return its "stop" value), and the program prints every call
 * of its callbacks, their arguments, the transfer's result and the error buffer, so that a run
 * under the preload can be compared byte for byte with a run without it. It knows nothing of
 * curlretry.
 *
 * usage: refusal_host SCENARIO easy|multi|socket URL
 *   SCENARIO is one of the names in configure() (header-0, write-0, opensocket-bad...).
 *   easy: curl_easy_perform; multi: curl_multi_perform/poll, the result from CURLMSG_DONE;
 *   socket: curl_multi_socket_action with socket and timer callbacks (the timer-fail and
 *   socket-fail scenarios make those return -1).
 * Bounded by alarm(): a hang ends the process with SIGALRM.
 */
#define CURL_DISABLE_DEPRECATION 1 /* the scenarios include the old progress callback */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char* scenario;
static int calls;  /* calls of the refusing callback */

static int is(const char* name) { return strcmp(scenario, name) == 0; }

/* --- header and write: refuse the first line / chunk ------------------------------------ */

static size_t refusal_for(size_t n) {
  if (strstr(scenario, "-short")) return n - 1;
  if (strstr(scenario, "-error")) return CURL_WRITEFUNC_ERROR;
  return 0;
}

static size_t on_header(char* data, size_t size, size_t n, void* userp) {
  (void)userp;
  size_t len = size * n;
  printf("header(%zu): %.*s", len, (int)len, data);
  if (len == 0 || data[len - 1] != '\n') printf("\n");
  if (strncmp(scenario, "header-", 7) == 0) {
    ++calls;
    /* header-later: the second line (after the status line) is refused */
    if (is("header-later") ? calls == 2 : calls == 1) return is("header-later") ? 0 : refusal_for(len);
  }
  return len;
}

static CURL* the_easy;
static int paused; /* write-pause: the write callback paused, the progress callback resumes */
static int writes; /* write-pause: calls of the write callback (`calls` counts the timer's too) */

static size_t on_write(char* data, size_t size, size_t n, void* userp) {
  (void)userp;
  (void)data;
  size_t len = size * n;
  printf("write(%zu)\n", len);
  if (strncmp(scenario, "write-pause", 11) == 0) {
    if (++writes == 1) {
      paused = 1;
      printf("pause\n");
      return CURL_WRITEFUNC_PAUSE;
    }
    /* write-pause-refuse: the chunk handed over again is refused */
    return is("write-pause-refuse") ? 0 : len;
  }
  if (strncmp(scenario, "write-", 6) == 0 && ++calls == 1) return refusal_for(len);
  return len;
}

/* --- upload: read, seek ----------------------------------------------------------------- */

static size_t uploaded;

static size_t on_read(char* buf, size_t size, size_t n, void* userp) {
  (void)userp;
  printf("read(%zu)\n", size * n);
  if (is("read-abort")) return CURL_READFUNC_ABORT;
  if (uploaded >= 5) return 0;
  memcpy(buf, "hello", 5);
  uploaded = 5;
  return 5;
}

static int on_seek(void* userp, curl_off_t offset, int origin) {
  (void)userp;
  printf("seek(%ld, %d)\n", (long)offset, origin);
  return is("seek-cantseek") ? CURL_SEEKFUNC_CANTSEEK : CURL_SEEKFUNC_FAIL;
}

static curlioerr on_ioctl(CURL* easy, int cmd, void* userp) {
  (void)easy;
  (void)userp;
  printf("ioctl(%d)\n", cmd);
  return CURLIOE_FAILRESTART;
}

static int on_trailer(struct curl_slist** list, void* userp) {
  (void)list;
  (void)userp;
  printf("trailer\n");
  return CURL_TRAILERFUNC_ABORT;
}

/* --- HSTS: the read callback gives one entry (or refuses), the write callback refuses -------- */

static CURLSTScode on_hsts_read(CURL* easy, struct curl_hstsentry* entry, void* userp) {
  (void)easy;
  (void)userp;
  ++calls;
  printf("hsts-read(%d)\n", calls);
  if (is("hsts-read-fail")) return CURLSTS_FAIL;
  if (calls > 1) return CURLSTS_DONE;
  strcpy(entry->name, "hsts.example.invalid");
  entry->includeSubDomains = 0;
  strcpy(entry->expire, "20991231 00:00:00");
  return CURLSTS_OK;
}

static CURLSTScode on_hsts_write(CURL* easy, struct curl_hstsentry* entry, struct curl_index* index, void* userp) {
  (void)easy;
  (void)userp;
  printf("hsts-write(%s, %zu/%zu)\n", entry->name, index->index, index->total);
  return CURLSTS_FAIL;
}

/* --- FTP wildcard matching: chunk begin / end, fnmatch ----------------------------------- */

static long on_chunk_bgn(const void* transfer_info, void* userp, int remains) {
  (void)userp;
  (void)remains;
  const struct curl_fileinfo* info = transfer_info;
  printf("chunk-bgn(%s)\n", info->filename);
  return is("chunk-bgn-fail") ? CURL_CHUNK_BGN_FUNC_FAIL : CURL_CHUNK_BGN_FUNC_OK;
}

static long on_chunk_end(void* userp) {
  (void)userp;
  printf("chunk-end\n");
  return is("chunk-end-fail") ? CURL_CHUNK_END_FUNC_FAIL : CURL_CHUNK_END_FUNC_OK;
}

static int on_fnmatch(void* userp, const char* pattern, const char* string) {
  (void)userp;
  printf("fnmatch(%s, %s)\n", pattern, string);
  return CURL_FNMATCHFUNC_FAIL;
}

/* --- progress -------------------------------------------------------------------------- */

static int on_xferinfo(void* userp, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
  (void)userp;
  if (strncmp(scenario, "write-pause", 11) == 0) {
    /* the program resumes from its progress callback, which libcurl keeps calling while the
       transfer is paused (easy and multi alike); what it is told then is printed
       (write-pause-abort: it aborts the paused transfer instead) */
    if (paused) {
      paused = 0;
      printf("xferinfo(%ld/%ld, %ld/%ld)\n", (long)dn, (long)dt, (long)un, (long)ut);
      if (is("write-pause-abort")) return 1;
      printf("resume=%d\n", (int)curl_easy_pause(the_easy, CURLPAUSE_CONT));
    }
    return 0;
  }
  (void)dt;
  (void)dn;
  (void)ut;
  (void)un;
  ++calls;
  if (calls == 1) printf("xferinfo\n");
  return 1;
}

static int on_progress(void* userp, double dt, double dn, double ut, double un) {
  (void)userp;
  (void)dt;
  (void)dn;
  (void)ut;
  (void)un;
  ++calls;
  if (calls == 1) printf("progress\n");
  return 1;
}

/* --- connection ------------------------------------------------------------------------ */

static curl_socket_t on_opensocket(void* userp, curlsocktype purpose, struct curl_sockaddr* addr) {
  (void)userp;
  printf("opensocket(purpose=%d)\n", (int)purpose);
  /* opensocket-ok: a socket like libcurl's own (the network may still refuse the connection) */
  if (is("opensocket-ok")) return socket(addr->family, addr->socktype, addr->protocol);
  return CURL_SOCKET_BAD;
}

static int on_sockopt(void* userp, curl_socket_t fd, curlsocktype purpose) {
  (void)userp;
  (void)fd;
  printf("sockopt(purpose=%d)\n", (int)purpose);
  return CURL_SOCKOPT_ERROR;
}

static int on_prereq(void* userp, char* conn_primary_ip, char* conn_local_ip, int conn_primary_port,
                     int conn_local_port) {
  (void)userp;
  (void)conn_local_ip;
  (void)conn_local_port;
  printf("prereq(%s, %d)\n", conn_primary_ip, conn_primary_port > 0);
  return CURL_PREREQFUNC_ABORT;
}

static int on_resolver_start(void* resolver_state, void* reserved, void* userp) {
  (void)resolver_state;
  (void)reserved;
  (void)userp;
  printf("resolver-start\n");
  return 1;
}

static CURLcode on_ssl_ctx(CURL* easy, void* ssl_ctx, void* userp) {
  (void)easy;
  (void)ssl_ctx;
  (void)userp;
  printf("ssl-ctx\n");
  /* ssl-ctx-35: the code a handshake failure has, which a retry engine would retry */
  return is("ssl-ctx-35") ? CURLE_SSL_CONNECT_ERROR : CURLE_ABORTED_BY_CALLBACK;
}

static int on_debug(CURL* easy, curl_infotype type, char* data, size_t size, void* userp) {
  (void)easy;
  (void)data;
  (void)size;
  (void)userp;
  if (type == CURLINFO_HEADER_OUT) printf("debug(header-out)\n");
  return 1; /* libcurl ignores what a debug callback returns */
}

/* --- the scenarios ---------------------------------------------------------------------- */

static struct curl_slist* chunked;

static void configure(CURL* easy) {
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
  if (strncmp(scenario, "read-", 5) == 0 || strncmp(scenario, "seek-", 5) == 0 || is("trailer-abort") ||
      is("ioctl-fail")) {
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, on_read);
    if (is("trailer-abort")) {
      chunked = curl_slist_append(NULL, "Transfer-Encoding: chunked");
      curl_easy_setopt(easy, CURLOPT_HTTPHEADER, chunked);
      curl_easy_setopt(easy, CURLOPT_TRAILERFUNCTION, on_trailer);
    } else {
      curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)5);
    }
    if (strncmp(scenario, "seek-", 5) == 0 || is("ioctl-fail")) {
      /* a 307 makes libcurl rewind the upload to send it again to the target (ioctl-fail: through
         the old ioctl callback, there being no seek callback) */
      if (is("ioctl-fail")) curl_easy_setopt(easy, CURLOPT_IOCTLFUNCTION, on_ioctl);
      else curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, on_seek);
      curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    }
  }
  if (is("xferinfo-abort") || strncmp(scenario, "write-pause", 11) == 0) {
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_xferinfo);
  }
  if (is("progress-abort")) {
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_PROGRESSFUNCTION, on_progress);
  }
  if (strncmp(scenario, "opensocket-", 11) == 0) curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, on_opensocket);
  if (is("sockopt-error")) curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
  if (is("prereq-abort")) curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, on_prereq);
  if (is("resolver-start")) curl_easy_setopt(easy, CURLOPT_RESOLVER_START_FUNCTION, on_resolver_start);
  if (strncmp(scenario, "ssl-ctx", 7) == 0) {
    curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
  }
  if (is("wildcard-ok") || strncmp(scenario, "chunk-", 6) == 0 || is("fnmatch-fail")) {
    curl_easy_setopt(easy, CURLOPT_WILDCARDMATCH, 1L);
    curl_easy_setopt(easy, CURLOPT_CHUNK_BGN_FUNCTION, on_chunk_bgn);
    curl_easy_setopt(easy, CURLOPT_CHUNK_END_FUNCTION, on_chunk_end);
    if (is("fnmatch-fail")) curl_easy_setopt(easy, CURLOPT_FNMATCH_FUNCTION, on_fnmatch);
  }
  if (strncmp(scenario, "hsts-", 5) == 0) {
    curl_easy_setopt(easy, CURLOPT_HSTS_CTRL, (long)CURLHSTS_ENABLE);
    curl_easy_setopt(easy, CURLOPT_HSTSREADFUNCTION, on_hsts_read);
    if (is("hsts-write-fail")) curl_easy_setopt(easy, CURLOPT_HSTSWRITEFUNCTION, on_hsts_write);
  }
  if (is("debug")) {
    curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
    curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, on_debug);
  }
}

static CURLcode run_multi(CURL* easy) {
  CURLM* multi = curl_multi_init();
  curl_multi_add_handle(multi, easy);
  CURLcode result = CURLE_OK;
  int running = 1;
  for (int round = 0; running && round < 100000; ++round) {
    if (curl_multi_perform(multi, &running) != CURLM_OK) break;
    if (running) curl_multi_poll(multi, NULL, 0, 100, NULL);
  }
  int left = 0;
  for (CURLMsg* m; (m = curl_multi_info_read(multi, &left)) != NULL;) {
    if (m->msg == CURLMSG_DONE) {
      printf("done\n");
      result = m->data.result;
    }
  }
  curl_multi_remove_handle(multi, easy);
  curl_multi_cleanup(multi);
  return result;
}

/* --- curl_multi_socket_action, with the program's socket and timer callbacks ---------------- */

static struct pollfd watched[8];
static int nwatched;
static long timeout_ms = -1;

static int on_socket(CURL* easy, curl_socket_t fd, int what, void* userp, void* socketp) {
  (void)easy;
  (void)userp;
  (void)socketp;
  printf("socket(%s)\n", what == CURL_POLL_REMOVE ? "remove" : what == CURL_POLL_IN ? "in" : what == CURL_POLL_OUT ? "out" : "inout");
  if (is("socket-fail")) return -1;
  int i = 0;
  while (i < nwatched && watched[i].fd != fd) ++i;
  if (what == CURL_POLL_REMOVE) {
    if (i < nwatched) watched[i] = watched[--nwatched];
    return 0;
  }
  if (i == nwatched) {
    if (nwatched == 8) return -1;
    ++nwatched;
  }
  watched[i].fd = fd;
  watched[i].events = (short)((what & CURL_POLL_IN ? POLLIN : 0) | (what & CURL_POLL_OUT ? POLLOUT : 0));
  return 0;
}

static int on_timer(CURLM* multi, long ms, void* userp) {
  (void)multi;
  (void)userp;
  ++calls;
  if (is("timer-fail")) {
    printf("timer(%ld)\n", ms);
    return -1;
  }
  timeout_ms = ms;
  return 0;
}

static CURLcode run_socket(CURL* easy) {
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
  CURLMcode added = curl_multi_add_handle(multi, easy);
  printf("add=%d\n", (int)added);
  CURLcode result = CURLE_OK;
  int running = 1, done = added != CURLM_OK; /* a refused add: the program gives up on the multi */
  for (int round = 0; !done && round < 100000; ++round) {
    long wait = timeout_ms < 0 || timeout_ms > 100 ? 100 : timeout_ms;
    int n = poll(watched, (nfds_t)nwatched, (int)wait);
    CURLMcode mc = CURLM_OK;
    if (n > 0) {
      for (int i = 0; i < nwatched; ++i) {
        if (!watched[i].revents) continue;
        int ev = (watched[i].revents & POLLIN ? CURL_CSELECT_IN : 0) | (watched[i].revents & POLLOUT ? CURL_CSELECT_OUT : 0);
        mc = curl_multi_socket_action(multi, watched[i].fd, ev, &running);
        if (mc != CURLM_OK) break;
      }
    } else {
      timeout_ms = -1;
      mc = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    if (mc != CURLM_OK) {
      printf("socket_action=%d (%s)\n", (int)mc, curl_multi_strerror(mc));
      break;
    }
    int left = 0;
    for (CURLMsg* m; (m = curl_multi_info_read(multi, &left)) != NULL;) {
      if (m->msg == CURLMSG_DONE) {
        printf("done\n");
        result = m->data.result;
        done = 1;
      }
    }
  }
  curl_multi_remove_handle(multi, easy);
  curl_multi_cleanup(multi);
  return result;
}

int main(int argc, char** argv) {
  if (argc != 4 || (strcmp(argv[2], "easy") != 0 && strcmp(argv[2], "multi") != 0 && strcmp(argv[2], "socket") != 0)) {
    fprintf(stderr, "usage: refusal_host SCENARIO easy|multi|socket URL\n");
    return 2;
  }
  alarm(20);
  setvbuf(stdout, NULL, _IOLBF, 0);
  scenario = argv[1];
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURL* easy = curl_easy_init();
  the_easy = easy;
  char error[CURL_ERROR_SIZE];
  memset(error, 'X', sizeof error); /* libcurl clears it at the start of a transfer */
  error[sizeof error - 1] = 0;
  curl_easy_setopt(easy, CURLOPT_URL, argv[3]);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
  configure(easy);
  CURLcode rc = strcmp(argv[2], "multi") == 0    ? run_multi(easy)
                : strcmp(argv[2], "socket") == 0 ? run_socket(easy)
                                                 : curl_easy_perform(easy);
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  printf("result=%d (%s)\nerror=%s\nstatus=%ld\n", (int)rc, curl_easy_strerror(rc), error, status);
  curl_easy_cleanup(easy);
  curl_slist_free_all(chunked);
  curl_global_cleanup();
  return 0;
}
