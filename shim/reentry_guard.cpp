#include "shim/reentry_guard.h"

namespace curlretry::shim {
namespace {
// initial-exec: a plain %fs load instead of a __tls_get_addr call on every wrapper (the library
// is preloaded, so its TLS is in the static block).
__attribute__((tls_model("initial-exec"))) thread_local bool t_in_libcurl = false;
}

bool inside_libcurl() { return t_in_libcurl; }

LibcurlScope::LibcurlScope() : previous_(t_in_libcurl) { t_in_libcurl = true; }
LibcurlScope::~LibcurlScope() { t_in_libcurl = previous_; }

HostScope::HostScope() : previous_(t_in_libcurl) { t_in_libcurl = false; }
HostScope::~HostScope() { t_in_libcurl = previous_; }

}  // namespace curlretry::shim
