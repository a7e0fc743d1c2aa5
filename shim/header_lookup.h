// Response headers read from libcurl's own header store (curl_easy_header), for a handle the
// shim has no header callback on (it saw no header line), and the one place that lookup is made;
// with them the status such a handle's head may lack.
#pragma once

#include <curl/curl.h>

#include <optional>
#include <string_view>

#include "core/hints.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"
#include "shim/response_head.h"

namespace curlretry::shim {

// The first header `name` (any case, NUL-terminated) of the last response of `easy` (after
// redirects; no 1xx, no trailers), as libcurl stores it (without white space at either end);
// nullopt without it or without curl_easy_header (libcurl before 7.83). The view lasts until the
// next header call on `easy`.
std::optional<std::string_view> libcurl_header(const real::Api& api, CURL* easy, const char* name);

// The status as the decision saw it (status_seen, shim/response_head.h) for a caller that holds
// only the head's: libcurl's CURLINFO_RESPONSE_CODE is asked only when the head has none. The
// fleet's view of an attempt and the heartbeat's cause use it. Inline: the fleet asks it after
// every attempt, a success's included.
inline int status_seen(const real::Api& api, CURL* easy, int head_status) {
  long code = 0;
  if (auto getinfo = api.easy_getinfo; getinfo && head_status == 0) {
    LibcurlScope scope(api);
    getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
  }
  return status_seen(head_status, code);
}

// The hints a response of `status` needs (core::wanted), fed to `hints` through take() as the
// header callback would: one lookup per such row of core::kHintHeaders.
void learn_hints(const real::Api& api, CURL* easy, int status, core::ResponseHints& hints);

}  // namespace curlretry::shim
