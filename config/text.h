// Small text helpers shared by config/, cli/ and shim/: ASCII-only on purpose (header names,
// hosts and env values must not change meaning with the host's locale).
#pragma once

#include <string>
#include <string_view>

namespace curlretry::config::text {

std::string lower(std::string_view text);
// Without leading spaces/tabs and trailing spaces/tabs/CR/LF.
std::string_view trim(std::string_view text);

}  // namespace curlretry::config::text
