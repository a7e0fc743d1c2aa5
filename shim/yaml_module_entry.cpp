// The entry point of curlretry-yaml.so: YAML text in, encoded node tree (or error) out, through a
// sink so that no memory crosses the boundary between the module's C++ runtime and the shim's.
#include <cstddef>

#include "config/yaml_tree.h"
#include "config/yaml_wire.h"

extern "C" __attribute__((visibility("default"))) int curlretry_yaml_parse(const char* text, size_t size,
                                                                          void (*sink)(void*, const char*, size_t),
                                                                          void* context) {
  try {
    std::string encoded = curlretry::config::encode_yaml_result(curlretry::config::parse_yaml({text, size}));
    sink(context, encoded.data(), encoded.size());
    return 0;
  } catch (...) {
    return -1;
  }
}
