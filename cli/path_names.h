// The last and the leading parts of a path, as doctor names files in its lines.
#pragma once

#include <string>

namespace curlretry::cli::doctor {

// "python3" for "/usr/bin/python3".
std::string basename_of(const std::string& path);

// "/usr/bin" for "/usr/bin/python3"; "." for a bare name.
std::string dirname_of(const std::string& path);

}  // namespace curlretry::cli::doctor
