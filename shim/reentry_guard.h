// Debian's libcurl calls its own public API (curl_multi_*, curl_easy_setopt) through the PLT from
// inside curl_easy_perform, so those internal calls land in our wrappers. While real libcurl
// runs on this thread the wrappers must pass straight through, to that same libcurl; while a
// host callback runs they must not (the host may start its own transfers from a callback).
#pragma once

namespace curlretry::shim {

namespace real {
struct Api;
}

namespace detail {
// The libcurl running on this thread, nullptr when none is. initial-exec: a plain %fs access on
// every wrapper (the library is preloaded, so its TLS is in the static block); constinit: no
// TLS wrapper function around it.
extern constinit __attribute__((tls_model("initial-exec"))) thread_local const real::Api* t_libcurl;
}  // namespace detail

inline bool inside_libcurl() { return detail::t_libcurl != nullptr; }
// The libcurl whose code is running on this thread (its internal calls go back to it), or nullptr.
inline const real::Api* running_libcurl() { return detail::t_libcurl; }

// Marks "real libcurl `api` is running on this thread" for its lifetime.
class LibcurlScope {
 public:
  explicit LibcurlScope(const real::Api& api) : previous_(detail::t_libcurl) { detail::t_libcurl = &api; }
  ~LibcurlScope() { detail::t_libcurl = previous_; }
  LibcurlScope(const LibcurlScope&) = delete;
  LibcurlScope& operator=(const LibcurlScope&) = delete;

 private:
  const real::Api* previous_;
};

// Marks "host code is running on this thread" (a host callback called from libcurl or from us).
class HostScope {
 public:
  HostScope() : previous_(detail::t_libcurl) { detail::t_libcurl = nullptr; }
  ~HostScope() { detail::t_libcurl = previous_; }
  HostScope(const HostScope&) = delete;
  HostScope& operator=(const HostScope&) = delete;

 private:
  const real::Api* previous_;
};

}  // namespace curlretry::shim
