// The interposed curl_mime_* entry points: the calls that build a MIME body, followed so that its
// curl_mime_data_cb parts can be sent again by a retry (shim/mime_parts.h). Each one forwards to
// the caller's libcurl unchanged but for curl_mime_data_cb's callbacks; libcurl's own internal
// calls (a form converted to MIME, a handle duplicated) are followed too, as they build parts
// the same way.
#include "shim/caller.h"
#include "shim/mime_parts.h"
#include "shim/real_curl.h"
#include "shim/reentry_guard.h"

using namespace curlretry::shim;

extern "C" {

__attribute__((visibility("default"))) curl_mimepart* curl_mime_addpart(curl_mime* mime) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto addpart = api.mime_addpart;
  if (addpart == nullptr) return nullptr;
  curl_mimepart* part;
  {
    LibcurlScope scope(api);
    part = addpart(mime);
  }
  if (part != nullptr) {
    try {
      mime_parts::added(mime, part);
    } catch (...) {
      // Out of memory: a callback part of this one is not replayable, as before.
    }
  }
  return part;
}

__attribute__((visibility("default"))) CURLcode curl_mime_subparts(curl_mimepart* part, curl_mime* subparts) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto set_subparts = api.mime_subparts;
  if (set_subparts == nullptr) return CURLE_FAILED_INIT;
  CURLcode code;
  {
    LibcurlScope scope(api);
    code = set_subparts(part, subparts);
  }
  if (code == CURLE_OK && part != nullptr && subparts != nullptr) {
    try {
      mime_parts::nested(part, subparts);
    } catch (...) {
    }
  }
  return code;
}

__attribute__((visibility("default"))) CURLcode curl_mime_data_cb(curl_mimepart* part, curl_off_t datasize,
                                                                  curl_read_callback readfunc,
                                                                  curl_seek_callback seekfunc,
                                                                  curl_free_callback freefunc, void* arg) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto data_cb = api.mime_data_cb;
  if (data_cb == nullptr) return CURLE_FAILED_INIT;
  mime_parts::DataCallbacks cb{readfunc, seekfunc, freefunc, arg, false};
  try {
    cb = mime_parts::wrap(part, readfunc, seekfunc, freefunc, arg);
  } catch (...) {
    // Out of memory: the program's own callbacks, not replayable, as before.
  }
  CURLcode code;
  {
    LibcurlScope scope(api);
    code = data_cb(part, datasize, cb.read, cb.seek, cb.free, cb.arg);
  }
  if (code != CURLE_OK) mime_parts::unwrap(cb);
  return code;
}

__attribute__((visibility("default"))) void curl_mime_free(curl_mime* mime) {
  const real::Api& api = CURLRETRY_CALLER_API();
  auto free_mime = api.mime_free;
  if (free_mime == nullptr) return;
  if (mime != nullptr) {
    try {
      mime_parts::freeing(mime);
    } catch (...) {
    }
  }
  LibcurlScope scope(api);
  free_mime(mime);  // frees the parts: each of ours through its free callback
}

}  // extern "C"
