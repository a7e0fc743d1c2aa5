#include "cli/path_names.h"

#include <algorithm>
#include <filesystem>

namespace curlretry::cli::doctor {

namespace fs = std::filesystem;

std::string basename_of(const std::string& path) { return fs::path(path).filename().string(); }

std::string dirname_of(const std::string& path) {
  const auto parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::vector<std::string> split_dir_list(const std::string& list, const char* separators) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find_first_of(separators, start), list.size());
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace curlretry::cli::doctor
