// The interposed curl_easy_* entry points. Each one is pass-through unless the runtime is active
// and the call comes from the host (not from libcurl's own internal calls).
#include <cstdarg>
#include <ctime>
#include <new>
#include <thread>

#include "shim/backoff_wait.h"
#include "shim/caller.h"
#include "shim/easy_options.h"
#include "shim/fleet_hook.h"
#include "shim/mime_parts.h"
#include "shim/multi_state.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/registry.h"
#include "shim/runtime.h"

using namespace curlretry::shim;

extern "C" {

__attribute__((visibility("default"))) CURL* curl_easy_init(void) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto init = api.easy_init;
  if (init == nullptr) return nullptr;
  CURL* easy;
  {
    LibcurlScope scope(api);
    easy = init();
  }
  if (easy == nullptr || inside_libcurl()) return easy;
  try {
    if (runtime().active) registry::add(easy, &api);
  } catch (...) {
    // Out of memory: this handle simply goes without retries.
  }
  return easy;
}

__attribute__((visibility("default"))) CURLcode curl_easy_setopt(CURL* easy, CURLoption option, ...) {
  va_list args;
  va_start(args, option);
  OptionValue value = read_option_value(option, args);
  va_end(args);
  const real::Api& api = CURLRETRY_CALLER_API();
  auto setopt = api.easy_setopt;
  if (setopt == nullptr) return CURLE_FAILED_INIT;
  // The option a program sets before every request: recorded, then passed on, without the
  // classification and the general recording's switch (issue 27).
  if (option == CURLOPT_URL && !inside_libcurl()) {
    if (Transfer* transfer = registry::find(easy)) record_url(transfer->host, value.pointer);
    LibcurlScope scope(api);
    return setopt(easy, option, value.pointer);
  }
  if (const OptionKind kind = inside_libcurl() ? OptionKind::other : option_kind(option); kind != OptionKind::other) {
    if (Transfer* transfer = registry::find(easy)) {
      record_option(transfer->host, option, value);
      // While a transfer runs our callbacks stay in place; the host's new ones take over from
      // the next delivery on, through the recorded options.
      if (transfer->installed() && kind == OptionKind::trampolined) return CURLE_OK;
      if (transfer->installed() && kind == OptionKind::watched) return transfer->rewatch(option);
    }
  }
  LibcurlScope scope(api);
  return forward_option(setopt, easy, option, value);
}

__attribute__((visibility("default"))) CURLcode curl_easy_perform(CURL* easy) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto perform = api.easy_perform;
  if (perform == nullptr) return CURLE_FAILED_INIT;
  Transfer* transfer = inside_libcurl() ? nullptr : registry::find(easy);
  const Runtime& rt = runtime();
  if (transfer == nullptr || !transfer->begin(rt, true)) {
    LibcurlScope scope(api);
    return perform(easy);
  }
  CURLcode code = CURLE_OK;
  try {
    // No fleet hold (the success path): no wait, so no two clock reads in wait_backoff.
    const curlretry::core::Millis hold =
        fleet_hook::hold_new(rt, transfer->host, transfer->deadline(), &transfer->fleet_key());
    if (hold.count() > 0 && !wait_backoff(*transfer, hold)) {
      transfer->abandon();
      return CURLE_ABORTED_BY_CALLBACK;
    }
    for (;;) {
      {
        LibcurlScope scope(api);
        code = perform(easy);
      }
      Transfer::Step step = transfer->finish_attempt(code);
      if (!step.retry) {
        code = step.paused ? wait_for_unpause(*transfer, step) : step.code;
        break;
      }
      // The step between attempts multi takes too (shim/between_attempts.h), slept through here.
      between_attempts::PendingRetry retry = between_attempts::start(*transfer, step.delay, code, Clock::now());
      if (const WaitEnd end = wait_between_attempts(*transfer, retry, step); end != WaitEnd::go) {
        if (end == WaitEnd::aborted) {
          code = transfer->aborted_during_backoff();
        } else {
          code = step.paused ? wait_for_unpause(*transfer, step) : step.code;
        }
        break;
      }
      transfer->prepare_next_attempt();
    }
  } catch (...) {
    // Only allocation failure can land here; the host gets the last real result.
  }
  transfer->end();
  return code;
}

__attribute__((visibility("default"))) void curl_easy_cleanup(CURL* easy) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto cleanup = api.easy_cleanup;
  if (!inside_libcurl()) {
    try {
      if (Transfer* transfer = registry::find(easy); transfer != nullptr && transfer->multi() != nullptr)
        release_from_multi(transfer->multi(), easy);
    } catch (...) {
      // Only allocation can fail here, and no exception may reach a C host: the handle is
      // forgotten and cleaned up below all the same.
    }
    registry::remove(easy);
  }
  if (cleanup == nullptr) return;
  LibcurlScope scope(api);
  cleanup(easy);
}

__attribute__((visibility("default"))) void curl_easy_reset(CURL* easy) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto reset = api.easy_reset;
  if (reset == nullptr) return;
  {
    LibcurlScope scope(api);
    reset(easy);
  }
  if (inside_libcurl()) return;
  if (Transfer* transfer = registry::find(easy)) {
    transfer->host = HostOptions{};
    transfer->forget_install();
  }
}

__attribute__((visibility("default"))) CURL* curl_easy_duphandle(CURL* easy) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto duphandle = api.easy_duphandle;
  if (duphandle == nullptr) return nullptr;
  CURL* copy;
  mime_parts::DuplicateWatch watch;  // the copy's own MIME body, if libcurl copies one
  {
    LibcurlScope scope(api);
    copy = duphandle(easy);
  }
  if (copy == nullptr || inside_libcurl()) return copy;
  try {
    if (Transfer* source = registry::find(easy)) {
      Transfer* twin = registry::add(copy, &api);
      twin->host = source->host;
      twin->host.mime = watch.body();
      // Duplicated mid-transfer, the copy carries our callbacks and the source's state: give it
      // the host's own.
      if (source->installed()) apply_host_callbacks(api, copy, twin->host);
      source->put_back_request(copy);
    }
  } catch (...) {
    // Out of memory for the copy's entry: it works as a plain libcurl handle, without retries.
  }
  return copy;
}

__attribute__((visibility("default"))) CURLcode curl_easy_pause(CURL* easy, int bitmask) {
  if (!inside_libcurl() && (bitmask & CURLPAUSE_RECV) == 0) {
    // libcurl has finished this transfer; only our replay of its held response is paused.
    Transfer* transfer = registry::find(easy);
    if (transfer != nullptr && transfer->replay_paused()) {
      // On the transfer's own thread the pending data is handed over now, inside this call, as
      // libcurl does; from elsewhere (which libcurl does not allow) the transfer's loop does it.
      if (transfer->replay_paused_here()) return transfer->unpause_replay();
      transfer->request_unpause();
      return CURLE_OK;
    }
  }
  const real::Api& api = CURLRETRY_CALLER_API();
  auto pause = api.easy_pause;
  if (pause == nullptr) return CURLE_FAILED_INIT;
  LibcurlScope scope(api);
  return pause(easy, bitmask);
}

}  // extern "C"
