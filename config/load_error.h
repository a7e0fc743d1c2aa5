// The one ladder that turns whatever a config load threw into its error text, so every entry point
// (load, load_from_string, the include combiner, the loader) words the same failure the same way.
#pragma once

#include <string>
#include <string_view>

namespace curlretry::config {

// Call only inside a catch block: rethrows the exception in flight and names it. A ConfigError keeps
// its own "file:line:col: key: problem" text; anything else gets `prefix` ("file: " or "") and
// "out of memory while loading the config" / "cannot load the config[: what()]".
std::string current_load_error(std::string_view prefix);

}  // namespace curlretry::config
