// The proxy runs with libcurlretry.so preloaded into itself: its libcurl transfers go through the
// very code that retries for any preloaded program. This makes sure of it before anything else.
#pragma once

#include <optional>
#include <string>

namespace curlretry::proxy {

// Returns when libcurlretry.so is mapped in this process (after pointing CURLRETRY_CONFIG at
// `config`, so the library reads the file the proxy reads). Otherwise re-executes this program
// once with the library preloaded, as the `curlretry` launcher would, and returns only an error.
std::string ensure_preloaded(char** argv, const std::optional<std::string>& config);

}  // namespace curlretry::proxy
