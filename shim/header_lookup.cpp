#include "shim/header_lookup.h"

#include "shim/real_curl.h"
#include "shim/reentry_guard.h"

namespace curlretry::shim {

std::optional<std::string_view> libcurl_header(const real::Api& api, CURL* easy, const char* name) {
  auto header = api.easy_header;
  if (header == nullptr) return std::nullopt;
  struct curl_header* h = nullptr;
  CURLHcode found;
  {
    LibcurlScope scope(api);
    // Index 0: the first of a repeated header, as on the callback path and in `curlretry explain`.
    found = header(easy, name, 0, CURLH_HEADER, -1, &h);
  }
  if (found != CURLHE_OK || h == nullptr || h->value == nullptr) return std::nullopt;
  return std::string_view(h->value);
}

void learn_hints(const real::Api& api, CURL* easy, int status, core::ResponseHints& hints) {
  for (const core::HintHeader& row : core::kHintHeaders) {
    if (!core::wanted(row.use, status)) continue;
    if (auto value = libcurl_header(api, easy, row.name.data())) hints.take(row.name, *value, status);
  }
}

}  // namespace curlretry::shim
