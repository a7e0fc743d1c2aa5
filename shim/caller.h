// The libcurl the calling code uses (see real::for_caller). A macro because it must read the
// return address of the exported wrapper itself.
#pragma once

#include "shim/real_curl.h"

#define CURLRETRY_CALLER_API() ::curlretry::shim::real::for_caller(__builtin_return_address(0))
