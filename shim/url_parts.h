// The request URL as the shim sees it: split by core/url.h (the one splitter `explain` uses too),
// and whether curlretry handles its scheme at all.
#pragma once

#include <string_view>

#include "core/url.h"

namespace curlretry::shim {

using core::UrlParts;

// core::split_url, never empty-handed: a URL libcurl would refuse (the transfer fails with
// CURLE_URL_MALFORMAT whatever we do) gives no scheme, no host and the path "/", which no host
// rule matches and no log line can leak a secret from.
UrlParts split_url(std::string_view url);

// Whether curlretry handles transfers to this URL: http and https; no scheme = http, as libcurl
// guesses. Without allocating; the common spellings inline (called for every transfer).
bool url_is_http_spelled(std::string_view url);
inline bool url_is_http(std::string_view url) {
  return url.starts_with("http://") || url.starts_with("https://") || url_is_http_spelled(url);
}

}  // namespace curlretry::shim
