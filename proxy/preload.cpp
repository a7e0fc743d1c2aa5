#include "proxy/preload.h"

#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "preload/ld_preload.h"
#include "preload/library_path.h"

namespace curlretry::proxy {
namespace {

constexpr const char* kReexecMarker = "CURLRETRY_PROXY_REEXEC";

bool library_mapped() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        constexpr std::string_view suffix = "/libcurlretry.so";
        if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
          *static_cast<bool*>(data) = true;
        }
        return 0;
      },
      &found);
  return found;
}

}  // namespace

std::string ensure_preloaded(char** argv, const std::optional<std::string>& config) {
  if (config) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(*config, ec);
    ::setenv("CURLRETRY_CONFIG", (ec ? *config : absolute.lexically_normal().string()).c_str(), 1);
  }
  if (library_mapped()) {
    ::unsetenv(kReexecMarker);
    return {};
  }
  if (std::getenv(kReexecMarker) != nullptr) {
    return "libcurlretry.so was preloaded but did not load (LD_PRELOAD=" +
           std::string(std::getenv("LD_PRELOAD") ? std::getenv("LD_PRELOAD") : "") + "); the proxy retries nothing "
           "without it";
  }
  const preload::LibraryLookup library = preload::find_library();
  if (!library.path) return library.error;
  if (library.path->find_first_of(": ") != std::string::npos) {
    return *library.path + ": LD_PRELOAD cannot carry a path with ':' or ' '";
  }
  ::setenv("LD_PRELOAD", preload::prepend_preload(*library.path, std::getenv("LD_PRELOAD")).c_str(), 1);
  ::setenv(kReexecMarker, "1", 1);
  ::execv("/proc/self/exe", argv);
  return std::string("cannot re-execute /proc/self/exe: ") + std::strerror(errno);
}

}  // namespace curlretry::proxy
