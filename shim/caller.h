// The libcurl the calling code uses. A macro because it must read the return address of the
// exported wrapper itself. A call made by libcurl's own code (its internal curl_multi_* calls
// from inside curl_easy_perform) goes back to the libcurl running on this thread without a
// lookup; any other caller is routed by real::for_caller.
#pragma once

#include "shim/real_curl.h"
#include "shim/reentry_guard.h"

#define CURLRETRY_CALLER_API()                                                 \
  (::curlretry::shim::running_libcurl() != nullptr                             \
       ? *::curlretry::shim::running_libcurl()                                 \
       : ::curlretry::shim::real::for_caller(__builtin_return_address(0)))
