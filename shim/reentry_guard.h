// Debian's libcurl calls its own public API (curl_multi_*, curl_easy_setopt) through the PLT from
// inside curl_easy_perform, so those internal calls land in our wrappers. While real libcurl
// runs on this thread the wrappers must pass straight through; while a host callback runs they
// must not (the host may start its own transfers from a callback).
#pragma once

namespace curlretry::shim {

bool inside_libcurl();

// Marks "real libcurl is running on this thread" for its lifetime.
class LibcurlScope {
 public:
  LibcurlScope();
  ~LibcurlScope();
  LibcurlScope(const LibcurlScope&) = delete;
  LibcurlScope& operator=(const LibcurlScope&) = delete;

 private:
  bool previous_;
};

// Marks "host code is running on this thread" (a host callback called from libcurl or from us).
class HostScope {
 public:
  HostScope();
  ~HostScope();
  HostScope(const HostScope&) = delete;
  HostScope& operator=(const HostScope&) = delete;

 private:
  bool previous_;
};

}  // namespace curlretry::shim
