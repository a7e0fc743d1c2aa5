// Trimming as config/, cli/ and shim/ read header lines and env values (case folding lives in
// core/ascii.h).
#pragma once

#include <string>
#include <string_view>

namespace curlretry::config::text {

// Without leading spaces/tabs and trailing spaces/tabs/CR/LF.
std::string_view trim(std::string_view text);

}  // namespace curlretry::config::text
