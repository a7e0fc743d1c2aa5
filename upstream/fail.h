// The flaky upstream's parsers and setup report a failure the same way: the reason into the
// caller's `error` (when it asked for one) and false.
#pragma once

#include <string>
#include <utility>

namespace curlretry::upstream {

inline bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

}  // namespace curlretry::upstream
