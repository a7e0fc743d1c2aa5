// Callbacks libcurl calls once per transfer, at its start, rather than once per request: a retry
// runs the transfer again inside what the program sees as one, so for attempts 2+ the shim takes
// them off the handle, and puts them back when the transfer ends. Today that is the HSTS read
// callback (libcurl's pretransfer step loads the HSTS cache from it; a program's iterator over
// its list runs past the end when asked twice, curl test 1915). See docs/CALLBACKS.md.
#pragma once

#include <curl/curl.h>

#include "shim/host_options.h"
#include "shim/real_curl.h"

namespace curlretry::shim {

class OncePerTransfer {
 public:
  // Before attempt 2, 3, ...: libcurl must not call them again.
  void before_retry(const real::Api& api, CURL* easy, const HostOptions& host);
  // When the transfer ends: the program's own settings are back on the handle.
  void restore(const real::Api& api, CURL* easy, const HostOptions& host) {
    if (hsts_read_off_) restore_now(api, easy, host);  // a test, not a call, for most (issue 27)
  }

 private:
  void restore_now(const real::Api& api, CURL* easy, const HostOptions& host);
  bool hsts_read_off_ = false;
};

}  // namespace curlretry::shim
