/* epoll_host: an epoll + timerfd event loop driving libcurl through curl_multi_socket_action,
 * in the shape of curl's docs/examples/ephiperfifo.c. Knows nothing of curlretry.
 *
 * usage: epoll_host URL|@FILE...
 * The loop runs until every transfer has its DONE. epoll_wait has no timeout of its own beyond
 * an 8 s stall guard (the longest wait any test scripts is 2 s): if libcurl (or anything in between) leaves a waiting
 * transfer with neither a socket nor an armed timer, the loop reports the stall instead of hanging.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "host_common.h"

#define STALL_MS 8000

static int epfd, tfd;
static CURLM* multi;
static struct host h;
static int timer_calls;

static int on_timer(CURLM* m, long timeout_ms, void* userp) {
  (void)m;
  (void)userp;
  timer_calls++;
  if (getenv("MULTI_HOST_TRACE")) fprintf(stderr, "trace %.1f timer %ld\n", now_ms() - h.start_ms, timeout_ms);
  struct itimerspec its;
  memset(&its, 0, sizeof its);
  if (timeout_ms > 0) {
    its.it_value.tv_sec = timeout_ms / 1000;
    its.it_value.tv_nsec = (timeout_ms % 1000) * 1000000;
  } else if (timeout_ms == 0) {
    its.it_value.tv_nsec = 1; /* as soon as possible, from the loop */
  } /* else: disarm */
  timerfd_settime(tfd, 0, &its, NULL);
  return 0;
}

static int on_socket(CURL* easy, curl_socket_t s, int what, void* userp, void* socketp) {
  (void)easy;
  (void)userp;
  if (what == CURL_POLL_REMOVE) {
    if (socketp) epoll_ctl(epfd, EPOLL_CTL_DEL, s, NULL);
    curl_multi_assign(multi, s, NULL);
    return 0;
  }
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.data.fd = s;
  if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
  if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
  if (socketp) {
    CHECK(epoll_ctl(epfd, EPOLL_CTL_MOD, s, &ev) == 0, "EPOLL_CTL_MOD %d: %s", s, strerror(errno));
  } else {
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, s, &ev) == 0, "EPOLL_CTL_ADD %d: %s", s, strerror(errno));
    curl_multi_assign(multi, s, &epfd); /* any non-NULL marks "registered" */
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: epoll_host URL|@FILE...\n");
    return 2;
  }
  host_watchdog(120);
  host_init(&h, "epoll_host", argc, argv, 1);
  epfd = epoll_create1(EPOLL_CLOEXEC);
  tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epfd < 0 || tfd < 0) return 2;
  struct epoll_event tev = {.events = EPOLLIN, .data.fd = tfd};
  epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &tev);
  multi = curl_multi_init();
  if (!multi) return 2;
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
  while (host_add_next(&h, multi)) {
  }
  while (h.completed < h.n) {
    struct epoll_event events[64];
    int n = epoll_wait(epfd, events, 64, STALL_MS);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      CHECK(0, "stalled: no socket event and no timer for %d ms with %zu of %zu transfers finished", STALL_MS,
            h.completed, h.n);
      break;
    }
    for (int i = 0; i < n; i++) {
      int running = 0;
      CURLMcode mc;
      if (events[i].data.fd == tfd) {
        uint64_t expirations;
        ssize_t ignored = read(tfd, &expirations, sizeof expirations);
        (void)ignored;
        if (getenv("MULTI_HOST_TRACE")) fprintf(stderr, "trace %.3f timer fired\n", now_ms() - h.start_ms);
        mc = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
      } else {
        int flags = 0;
        if (events[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
        mc = curl_multi_socket_action(multi, events[i].data.fd, flags, &running);
      }
      CHECK(mc == CURLM_OK, "curl_multi_socket_action = %d", (int)mc);
      h.loops++;
      host_read_messages(&h, multi, 0);
    }
  }
  curl_multi_cleanup(multi);
  close(tfd);
  close(epfd);
  fprintf(stderr, "timer_calls=%d\n", timer_calls);
  return host_report(&h, 1);
}
