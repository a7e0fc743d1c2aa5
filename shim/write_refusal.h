// A program's header or write callback refused data that reached it from the shim's hold (the
// held headers or body of a response, handed over at the first body byte or at the give-up).
// libcurl then saw a refusal on another path than the program's, or none at all: the shim writes
// into the program's CURLOPT_ERRORBUFFER the text libcurl writes when that callback refuses the
// data itself, so that the program's own "no" reads the same with the library and without it.
#pragma once

#include <cstddef>
#include <string>

#include "shim/real_curl.h"

namespace curlretry::shim {

struct WriteRefusal {
  enum class By : unsigned char { none, header, body };
  By by = By::none;     // which callback refused: the header callback, or the body's writer
  size_t passed = 0;    // what it was handed
  size_t returned = 0;  // what it returned

  bool refused() const { return by != By::none; }
};

// The text libcurl `api` puts in the error buffer for `refusal`.
std::string libcurl_refusal_text(const real::Api& api, const WriteRefusal& refusal);

// Writes it into `error_buffer` (CURL_ERROR_SIZE bytes, the program's), when there is one.
void report_refusal(const real::Api& api, const WriteRefusal& refusal, char* error_buffer);

}  // namespace curlretry::shim
