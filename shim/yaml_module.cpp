// parse_yaml() for the preload library: yaml-cpp (and with it libstdc++.so) lives in the module
// curlretry-yaml.so beside this library, loaded RTLD_LOCAL on the first config file only. Hosts
// without a config file never map it; hosts with one cannot bind to its symbols.
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "config/yaml_tree.h"
#include "config/yaml_wire.h"
#include "shim/fork_guard.h"
#include "shim/module_path.h"

namespace curlretry::config {
namespace {

using ParseFn = int (*)(const char* text, size_t size, void (*sink)(void*, const char*, size_t), void* context);

ParseFn load_parser(std::string* error) {
  static std::mutex& mutex = []() -> std::mutex& {
    static std::mutex m;
    shim::guard_across_fork(m);
    return m;
  }();
  static ParseFn parse = nullptr;
  static std::string load_error;
  std::lock_guard lock(mutex);
  if (parse == nullptr && load_error.empty()) {
    std::string path = shim::module_path("curlretry-yaml.so");
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      load_error = "cannot load the YAML reader " + path + ": " + (why ? why : "unknown error");
    } else if ((parse = reinterpret_cast<ParseFn>(dlsym(handle, "curlretry_yaml_parse"))) == nullptr) {
      load_error = path + " has no curlretry_yaml_parse";
    }
  }
  *error = load_error;
  return parse;
}

void append(void* context, const char* data, size_t size) { static_cast<std::string*>(context)->append(data, size); }

}  // namespace

std::variant<YamlNode, YamlError> parse_yaml(std::string_view text) {
  std::string error;
  ParseFn parse = load_parser(&error);
  if (parse == nullptr) {
    YamlError e;
    e.has_position = false;
    e.message = error;
    return e;
  }
  std::string encoded;
  parse(text.data(), text.size(), append, &encoded);
  return decode_yaml_result(encoded);
}

}  // namespace curlretry::config
