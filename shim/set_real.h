// One curl_easy_setopt of the shim's own on a handle, straight to the real libcurl `api` (never
// through our wrapper, so it is not recorded as the program's option). The one definition for
// the transfer's trampolines and timeouts, the request override and the once-per-transfer
// callbacks. Inline: the success path sets its trampolines through it on every transfer.
#pragma once

#include <curl/curl.h>

#include "shim/real_curl.h"
#include "shim/reentry_guard.h"

namespace curlretry::shim {

// Does nothing when this libcurl has no curl_easy_setopt (it was never found): the option keeps
// the program's value.
template <typename V>
inline void set_real(const real::Api& api, CURL* easy, CURLoption option, V value) {
  if (auto setopt = api.easy_setopt) {
    LibcurlScope scope(api);
    setopt(easy, option, value);
  }
}

}  // namespace curlretry::shim
