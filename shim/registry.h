// Side map from the host's easy handles to their Transfer state. Never CURLOPT_PRIVATE: that
// belongs to the host.
#pragma once

#include <curl/curl.h>

#include "shim/transfer.h"

namespace curlretry::shim::registry {

Transfer* find(CURL* easy);
// Replaces any stale entry for a reused address. `api`: the libcurl that made the handle.
Transfer* add(CURL* easy, const real::Api* api);
void remove(CURL* easy);

}  // namespace curlretry::shim::registry
