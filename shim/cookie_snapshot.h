// The cookies of an easy handle's cookie engine, kept before a transfer's first attempt so that
// each retry starts from them: the cookies a discarded attempt set never reach the next request,
// the jar, or later transfers (issue 11 §4). A lucky first try would not have seen them.
//
// Only the cookies the discarded attempt named in its Set-Cookie headers are put back (removed
// when they are new, restored when they were changed or deleted): a store shared with other
// handles (CURLOPT_SHARE with CURL_LOCK_DATA_COOKIE, as the curl tool does) keeps what other
// transfers set meanwhile, unless they set a cookie of the same name during this retry's wait.
#pragma once

#include <curl/curl.h>

#include <string>
#include <vector>

#include "shim/real_curl.h"

namespace curlretry::shim {

class CookieSnapshot {
 public:
  // Keeps the handle's cookies as they are before the first attempt (CURLOPT_COOKIEFILE's files
  // are not among them: libcurl loads those again at the start of every attempt).
  void take(const real::Api& api, CURL* easy);
  // After a discarded attempt: the cookies it set, changed or deleted are as they were kept.
  void restore(const real::Api& api, CURL* easy) const;
  void clear() noexcept {
    taken_ = false;
    lines_.clear();
  }

 private:
  bool taken_ = false;
  std::vector<std::string> lines_;  // Netscape cookie-file lines, as CURLINFO_COOKIELIST gives them
};

}  // namespace curlretry::shim
