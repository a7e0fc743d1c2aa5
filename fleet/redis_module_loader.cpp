#include "fleet/redis_module_loader.h"

#include <dlfcn.h>

#include <cstdlib>

namespace curlretry::fleet {

RedisEndpoint parse_redis_url(std::string_view url) {
  RedisEndpoint e;
  const auto scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    e.db = std::atoi(std::string(rest.substr(slash + 1)).c_str());
  }
  const auto colon = authority.rfind(':');
  const auto bracket = authority.rfind(']');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    e.port = std::atoi(std::string(authority.substr(colon + 1)).c_str());
    authority = authority.substr(0, colon);
  }
  if (authority.size() > 2 && authority.front() == '[' && authority.back() == ']') {
    authority = authority.substr(1, authority.size() - 2);
  }
  e.host = std::string(authority);
  return e;
}

RedisModule load_redis_module(const std::string& path) {
  RedisModule m;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    m.error = "cannot load the Redis store " + path + ": " + (why ? why : "unknown error");
    return m;
  }
  m.connect = reinterpret_cast<curlretry_redis_connect_fn>(dlsym(handle, "curlretry_redis_connect"));
  m.free = reinterpret_cast<curlretry_redis_free_fn>(dlsym(handle, "curlretry_redis_free"));
  m.timeout = reinterpret_cast<curlretry_redis_timeout_fn>(dlsym(handle, "curlretry_redis_timeout_v1"));
  m.cool = reinterpret_cast<curlretry_redis_cool_fn>(dlsym(handle, "curlretry_redis_cool"));
  m.sync = reinterpret_cast<curlretry_redis_sync_fn>(dlsym(handle, "curlretry_redis_sync_v6"));
  m.end = reinterpret_cast<curlretry_redis_end_fn>(dlsym(handle, "curlretry_redis_end_v1"));
  m.list = reinterpret_cast<curlretry_redis_list_fn>(dlsym(handle, "curlretry_redis_list_v1"));
  m.clear = reinterpret_cast<curlretry_redis_clear_fn>(dlsym(handle, "curlretry_redis_clear_v1"));
  m.probe = reinterpret_cast<curlretry_redis_probe_fn>(dlsym(handle, "curlretry_redis_probe_v1"));
  if (!m.connect || !m.free || !m.timeout || !m.cool || !m.sync || !m.end || !m.list || !m.clear || !m.probe) {
    m.error = path + " lacks the curlretry_redis_* entry points of this version";
  }
  return m;
}

}  // namespace curlretry::fleet
