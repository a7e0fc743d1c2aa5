/* uv_host: a libuv event loop driving libcurl through curl_multi_socket_action, in the shape of
 * curl's docs/examples/multi-uv.c (CURLMOPT_SOCKETFUNCTION + CURLMOPT_TIMERFUNCTION, one
 * uv_poll_t per socket, one uv_timer_t). Knows nothing of curlretry.
 *
 * usage: uv_host URL|@FILE...
 * uv_run returns when nothing is left to watch: no socket, no armed timer. A transfer that
 * waits between attempts with neither would end the loop early, which the report catches
 * (a transfer without DONE).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#include "host_common.h"

static uv_loop_t* loop;
static uv_timer_t timeout;
static CURLM* multi;
static struct host h;
static int timer_calls;

struct curl_context {
  uv_poll_t poll;
  curl_socket_t fd;
};

static void check_multi_info(void) { host_read_messages(&h, multi, 0); }

static void on_socket_ready(uv_poll_t* req, int status, int events) {
  struct curl_context* ctx = req->data;
  int flags = 0;
  if (status < 0) flags = CURL_CSELECT_ERR;
  if (!status && (events & UV_READABLE)) flags |= CURL_CSELECT_IN;
  if (!status && (events & UV_WRITABLE)) flags |= CURL_CSELECT_OUT;
  int running = 0;
  CURLMcode mc = curl_multi_socket_action(multi, ctx->fd, flags, &running);
  CHECK(mc == CURLM_OK, "curl_multi_socket_action(fd) = %d", (int)mc);
  h.loops++;
  check_multi_info();
}

static void on_timeout(uv_timer_t* req) {
  (void)req;
  if (getenv("MULTI_HOST_TRACE")) fprintf(stderr, "trace %.3f timer fired\n", now_ms() - h.start_ms);
  int running = 0;
  CURLMcode mc = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
  CHECK(mc == CURLM_OK, "curl_multi_socket_action(TIMEOUT) = %d", (int)mc);
  h.loops++;
  check_multi_info();
}

static int start_timeout(CURLM* m, long timeout_ms, void* userp) {
  (void)m;
  (void)userp;
  timer_calls++;
  if (getenv("MULTI_HOST_TRACE")) fprintf(stderr, "trace %.1f timer %ld\n", now_ms() - h.start_ms, timeout_ms);
  if (timeout_ms < 0) {
    uv_timer_stop(&timeout);
  } else {
    if (timeout_ms == 0) timeout_ms = 1; /* 0 means "as soon as possible": not from inside here */
    uv_timer_start(&timeout, on_timeout, (uint64_t)timeout_ms, 0);
  }
  return 0;
}

static void close_context(uv_handle_t* handle) { free(handle->data); }

static int handle_socket(CURL* easy, curl_socket_t s, int action, void* userp, void* socketp) {
  (void)easy;
  (void)userp;
  struct curl_context* ctx = socketp;
  if (action == CURL_POLL_IN || action == CURL_POLL_OUT || action == CURL_POLL_INOUT) {
    if (!ctx) {
      ctx = malloc(sizeof *ctx);
      ctx->fd = s;
      uv_poll_init_socket(loop, &ctx->poll, s);
      ctx->poll.data = ctx;
      curl_multi_assign(multi, s, ctx);
    }
    int events = 0;
    if (action != CURL_POLL_IN) events |= UV_WRITABLE;
    if (action != CURL_POLL_OUT) events |= UV_READABLE;
    uv_poll_start(&ctx->poll, events, on_socket_ready);
  } else if (action == CURL_POLL_REMOVE && ctx) {
    uv_poll_stop(&ctx->poll);
    uv_close((uv_handle_t*)&ctx->poll, close_context);
    curl_multi_assign(multi, s, NULL);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: uv_host URL|@FILE...\n");
    return 2;
  }
  host_watchdog(120);
  host_init(&h, "uv_host", argc, argv, 1);
  loop = uv_default_loop();
  uv_timer_init(loop, &timeout);
  multi = curl_multi_init();
  if (!multi) return 2;
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, handle_socket);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, start_timeout);
  while (host_add_next(&h, multi)) {
  }
  uv_run(loop, UV_RUN_DEFAULT);
  CHECK(h.completed == h.n, "uv_run returned with %zu of %zu transfers finished (nothing left to watch)",
        h.completed, h.n);
  curl_multi_cleanup(multi);
  uv_close((uv_handle_t*)&timeout, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
  fprintf(stderr, "timer_calls=%d\n", timer_calls);
  return host_report(&h, 1);
}
