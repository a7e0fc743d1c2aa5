// Response headers read from libcurl's own header store (curl_easy_header), for a handle the
// shim has no header callback on (it saw no header line), and the one place that lookup is made.
#pragma once

#include <curl/curl.h>

#include <optional>
#include <string_view>

#include "core/hints.h"

namespace curlretry::shim {
namespace real {
struct Api;
}

// The first header `name` (any case, NUL-terminated) of the last response of `easy` (after
// redirects; no 1xx, no trailers), as libcurl stores it (without white space at either end);
// nullopt without it or without curl_easy_header (libcurl before 7.83). The view lasts until the
// next header call on `easy`.
std::optional<std::string_view> libcurl_header(const real::Api& api, CURL* easy, const char* name);

// The hints a response of `status` needs (core::wanted), fed to `hints` through take() as the
// header callback would: one lookup per such row of core::kHintHeaders.
void learn_hints(const real::Api& api, CURL* easy, int status, core::ResponseHints& hints);

}  // namespace curlretry::shim
