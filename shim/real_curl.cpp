#include "shim/real_curl.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>

namespace curlretry::shim::real {
namespace {

struct SearchState {
  const char* symbol;
  void* found;
};

bool is_libcurl(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libcurl", 7) == 0 && std::strstr(base, ".so") != nullptr;
}

// Our own object: its name also starts with "libcurl", and finding ourselves would recurse.
ElfW(Addr) own_base() {
  static const ElfW(Addr) base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&is_libcurl), &info);
    return reinterpret_cast<ElfW(Addr)>(info.dli_fbase);
  }();
  return base;
}

int search_loaded(struct dl_phdr_info* info, size_t, void* data) {
  auto* state = static_cast<SearchState*>(data);
  if (info->dlpi_name == nullptr || !is_libcurl(info->dlpi_name) || info->dlpi_addr == own_base()) return 0;
  // RTLD_NOLOAD only takes a reference on an object that is already there.
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  void* symbol = dlsym(handle, state->symbol);
  dlclose(handle);
  if (symbol == nullptr) return 0;
  state->found = symbol;
  return 1;
}

void* lookup(const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) return p;
  SearchState state{name, nullptr};
  dl_iterate_phdr(search_loaded, &state);
  return state.found;
}

template <typename Fn>
Fn cached(std::atomic<void*>& slot, const char* name) {
  void* p = slot.load(std::memory_order_acquire);
  if (p == nullptr) {
    p = lookup(name);
    if (p != nullptr) slot.store(p, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(p);
}

}  // namespace

#define CURLRETRY_REAL(fn)                                  \
  fn##_fn fn() {                                            \
    static std::atomic<void*> slot{nullptr};                \
    return cached<fn##_fn>(slot, "curl_" #fn);              \
  }

CURLRETRY_REAL(easy_init)
CURLRETRY_REAL(easy_setopt)
CURLRETRY_REAL(easy_perform)
CURLRETRY_REAL(easy_cleanup)
CURLRETRY_REAL(easy_reset)
CURLRETRY_REAL(easy_duphandle)
CURLRETRY_REAL(easy_getinfo)
CURLRETRY_REAL(easy_pause)
CURLRETRY_REAL(easy_header)
CURLRETRY_REAL(multi_init)
CURLRETRY_REAL(multi_cleanup)
CURLRETRY_REAL(multi_add_handle)
CURLRETRY_REAL(multi_remove_handle)
CURLRETRY_REAL(multi_perform)
CURLRETRY_REAL(multi_poll)
CURLRETRY_REAL(multi_wait)
CURLRETRY_REAL(multi_wakeup)
CURLRETRY_REAL(multi_info_read)
CURLRETRY_REAL(multi_socket_action)
CURLRETRY_REAL(multi_socket)
CURLRETRY_REAL(multi_socket_all)
CURLRETRY_REAL(multi_timeout)
CURLRETRY_REAL(multi_fdset)
CURLRETRY_REAL(multi_setopt)

#undef CURLRETRY_REAL

}  // namespace curlretry::shim::real
