// The last and the leading parts of a path, as doctor names files in its lines.
#pragma once

#include <string>
#include <vector>

namespace curlretry::cli::doctor {

// "python3" for "/usr/bin/python3".
std::string basename_of(const std::string& path);

// "/usr/bin" for "/usr/bin/python3"; "." for a bare name.
std::string dirname_of(const std::string& path);

// The non-empty entries of a directory list split at any of `separators` (":" for DT_RUNPATH,
// ":;" for LD_LIBRARY_PATH, as the loader reads them).
std::vector<std::string> split_dir_list(const std::string& list, const char* separators);

}  // namespace curlretry::cli::doctor
