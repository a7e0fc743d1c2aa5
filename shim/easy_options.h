// curl_easy_setopt is variadic; the argument's type follows from the option number's range.
#pragma once

#include <curl/curl.h>

#include <cstdarg>

#include "shim/host_options.h"
#include "shim/real_curl.h"

namespace curlretry::shim {

// Inline: every curl_easy_setopt of the program passes here, and libcurl's own calls too.
inline OptionValue read_option_value(CURLoption option, va_list args) {
  OptionValue value{};
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    value.number = va_arg(args, long);
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    value.pointer = va_arg(args, void*);
  } else if (option < CURLOPTTYPE_OFF_T) {
    value.function = va_arg(args, void (*)());
  } else if (option < CURLOPTTYPE_BLOB) {
    value.offset = va_arg(args, curl_off_t);
  } else {
    value.pointer = va_arg(args, void*);  // struct curl_blob*
  }
  return value;
}

inline CURLcode forward_option(real::easy_setopt_fn setopt, CURL* easy, CURLoption option, OptionValue value) {
  if (option < CURLOPTTYPE_OBJECTPOINT) return setopt(easy, option, value.number);
  if (option < CURLOPTTYPE_FUNCTIONPOINT) return setopt(easy, option, value.pointer);
  if (option < CURLOPTTYPE_OFF_T) return setopt(easy, option, value.function);
  if (option < CURLOPTTYPE_BLOB) return setopt(easy, option, value.offset);
  return setopt(easy, option, value.pointer);
}

}  // namespace curlretry::shim
