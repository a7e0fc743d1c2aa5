#include "shim/module_path.h"

#include <dlfcn.h>

namespace curlretry::shim {

std::string module_path(std::string_view file) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_path), &info) == 0 || info.dli_fname == nullptr) return {};
  const std::string self = info.dli_fname;
  const auto slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + std::string(file);
}

}  // namespace curlretry::shim
