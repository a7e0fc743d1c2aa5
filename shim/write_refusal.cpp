#include "shim/write_refusal.h"

#include <curl/curl.h>

#include <cstdio>
#include <cstring>

#include "shim/reentry_guard.h"

namespace curlretry::shim {
namespace {

// libcurl 8.7 moved the delivery to the client into one writer (lib/cw-out.c), which words a
// refusal the same for headers and body and names the sizes. Before it, lib/sendf.c's
// chop_write() had one fixed text per callback.
constexpr unsigned kClientWriter = 0x080700;

unsigned version_of(const real::Api& api) {
  if (api.version_info == nullptr) return 0;
  const curl_version_info_data* info = nullptr;
  {
    LibcurlScope scope(api);
    info = api.version_info(CURLVERSION_NOW);
  }
  return info != nullptr ? info->version_num : 0;
}

}  // namespace

std::string libcurl_refusal_text(const real::Api& api, const WriteRefusal& refusal) {
  if (!refusal.refused()) return {};
  if (version_of(api) >= kClientWriter) {
    char text[160];
    if (refusal.returned == CURL_WRITEFUNC_ERROR) {
      std::snprintf(text, sizeof text, "client returned ERROR on write of %zu bytes", refusal.passed);
    } else {
      std::snprintf(text, sizeof text, "Failure writing output to destination, passed %zu returned %zu", refusal.passed,
                    refusal.returned);
    }
    return text;
  }
  return refusal.by == WriteRefusal::By::header ? "Failed writing header" : "Failure writing output to destination";
}

void report_refusal(const real::Api& api, const WriteRefusal& refusal, char* error_buffer) {
  if (error_buffer == nullptr || !refusal.refused()) return;
  const std::string text = libcurl_refusal_text(api, refusal);
  std::snprintf(error_buffer, CURL_ERROR_SIZE, "%s", text.c_str());
}

}  // namespace curlretry::shim
