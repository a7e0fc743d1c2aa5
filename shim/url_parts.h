// The parts of a request URL that curlretry may use: host for rule matching, path (without query
// or fragment) for matching and logs. Userinfo and query strings carry secrets and are dropped
// here, before anything else sees the URL.
#pragma once

#include <string>
#include <string_view>

namespace curlretry::shim {

struct UrlParts {
  std::string scheme;  // lower case, empty when the URL has none
  std::string host;    // lower case, without port and without IPv6 brackets
  std::string port;    // as written, may be empty
  std::string path;    // starts with '/', no query, no fragment

  // "host[:port]/path": what a log line shows.
  std::string display() const;
};

UrlParts split_url(std::string_view url);

// Whether curlretry handles transfers with this scheme (http and https; no scheme = http, as
// libcurl guesses).
bool is_http_scheme(std::string_view scheme);
// The same for a whole URL, without allocating (called for every transfer).
bool url_is_http(std::string_view url);

}  // namespace curlretry::shim
