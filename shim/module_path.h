// The helper modules that ship beside libcurlretry.so (curlretry-yaml.so, curlretry-fleet-redis.so)
// are found next to the library itself, wherever the program loaded it from: never by the
// loader's search path, which the program's environment controls.
#pragma once

#include <string>
#include <string_view>

namespace curlretry::shim {

// "<directory of libcurlretry.so>/<file>" ("./<file>" when the library has no directory); empty
// when dladdr cannot say where this library is.
std::string module_path(std::string_view file);

}  // namespace curlretry::shim
