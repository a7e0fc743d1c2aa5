// Where libcurlretry.so is, for the launcher, the demo and the proxy: $CURLRETRY_LIBRARY, else next to the
// `curlretry` binary in a build tree, else the installed locations relative to it. Relative to
// the binary (via /proc/self/exe), never to the working directory, so a relocated install works.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace curlretry::preload {

struct LibraryLookup {
  std::optional<std::string> path;  // absolute, symlinks resolved
  std::string error;                // when not found: what was tried
};

// `env_library`: the value of CURLRETRY_LIBRARY (nullptr or empty = unset); `exe`: the absolute
// path of the running binary.
LibraryLookup find_library(const char* env_library, const std::string& exe);

// The candidates tried after CURLRETRY_LIBRARY, in order.
std::vector<std::string> library_candidates(const std::string& exe);

// find_library with the real environment and /proc/self/exe.
LibraryLookup find_library();

}  // namespace curlretry::preload
