#include "preload/library_path.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef CURLRETRY_MULTIARCH
#define CURLRETRY_MULTIARCH ""
#endif

namespace curlretry::preload {
namespace {

constexpr const char* kLibraryName = "libcurlretry.so";

bool is_readable_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), R_OK) == 0;
}

std::string absolute_real(const std::string& path) {
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  if (ec) return std::filesystem::absolute(path, ec).lexically_normal().string();
  return real.string();
}

}  // namespace

std::vector<std::string> library_candidates(const std::string& exe) {
  const std::filesystem::path dir = std::filesystem::path(exe).parent_path();
  const std::filesystem::path up = dir / "..";
  std::vector<std::filesystem::path> paths = {up / "shim" / kLibraryName};
  const std::string multiarch = CURLRETRY_MULTIARCH;
  if (!multiarch.empty()) {
    paths.push_back(up / "lib" / multiarch / "curlretry" / kLibraryName);
    paths.push_back(up / "lib" / multiarch / kLibraryName);
  }
  paths.push_back(up / "lib" / "curlretry" / kLibraryName);
  paths.push_back(up / "lib" / kLibraryName);
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.lexically_normal().string());
  return out;
}

LibraryLookup find_library(const char* env_library, const std::string& exe) {
  LibraryLookup result;
  if (env_library != nullptr && *env_library != '\0') {
    // An explicit choice that is wrong must not silently fall back to another build.
    if (!is_readable_file(env_library)) {
      result.error = std::string("CURLRETRY_LIBRARY=") + env_library + ": no readable file there";
      return result;
    }
    result.path = absolute_real(env_library);
    return result;
  }
  const auto candidates = library_candidates(exe);
  for (const auto& candidate : candidates) {
    if (is_readable_file(candidate)) {
      result.path = absolute_real(candidate);
      return result;
    }
  }
  result.error = "cannot find " + std::string(kLibraryName) + "; tried:";
  for (const auto& candidate : candidates) result.error += "\n  " + candidate;
  result.error += "\nset CURLRETRY_LIBRARY to its path";
  return result;
}

LibraryLookup find_library() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    const char* env = std::getenv("CURLRETRY_LIBRARY");
    if (env != nullptr && *env != '\0') return find_library(env, "");
    LibraryLookup result;
    result.error = "cannot find libcurlretry.so: /proc/self/exe is unreadable (" + ec.message() +
                   "); set CURLRETRY_LIBRARY to its path";
    return result;
  }
  return find_library(std::getenv("CURLRETRY_LIBRARY"), exe.string());
}

}  // namespace curlretry::preload
