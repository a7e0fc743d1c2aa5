#include "cli/path_names.h"

#include <filesystem>

namespace curlretry::cli::doctor {

namespace fs = std::filesystem;

std::string basename_of(const std::string& path) { return fs::path(path).filename().string(); }

std::string dirname_of(const std::string& path) {
  const auto parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace curlretry::cli::doctor
