// curl_easy_setopt is variadic; the argument's type follows from the option number's range.
#pragma once

#include <curl/curl.h>

#include <cstdarg>

#include "shim/host_options.h"
#include "shim/real_curl.h"

namespace curlretry::shim {

OptionValue read_option_value(CURLoption option, va_list args);
CURLcode forward_option(real::easy_setopt_fn setopt, CURL* easy, CURLoption option, OptionValue value);

}  // namespace curlretry::shim
