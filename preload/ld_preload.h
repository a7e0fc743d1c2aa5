// LD_PRELOAD as ld.so reads it (a list split on ':' and ' '), for the launcher and the proxy's
// re-execution of itself.
#pragma once

#include <string>

namespace curlretry::preload {

// `library` in front of `current` (an LD_PRELOAD value), unless it is already in the list.
std::string prepend_preload(const std::string& library, const char* current);

}  // namespace curlretry::preload
