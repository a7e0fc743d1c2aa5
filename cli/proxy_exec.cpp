#include "cli/proxy_exec.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

namespace curlretry::cli {

int exec_proxy(int argc, char** argv) { return exec_proxy(std::vector<std::string>(argv + 2, argv + argc)); }

int exec_proxy(const std::vector<std::string>& arguments) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path(".") : exe.parent_path();
  const std::filesystem::path candidates[] = {dir / "curlretry-proxy", dir / ".." / "proxy" / "curlretry-proxy"};
  for (const auto& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) != 0) continue;
    const std::string path = candidate.lexically_normal().string();
    std::vector<char*> args;
    args.push_back(const_cast<char*>("curlretry-proxy"));
    for (const auto& a : arguments) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(path.c_str(), args.data());
    std::cerr << "curlretry: cannot run " << path << ": " << std::strerror(errno) << '\n';
    return 1;
  }
  std::cerr << "curlretry: proxy: cannot find curlretry-proxy; tried:\n";
  for (const auto& candidate : candidates) std::cerr << "  " << candidate.lexically_normal().string() << '\n';
  return 1;
}

}  // namespace curlretry::cli
