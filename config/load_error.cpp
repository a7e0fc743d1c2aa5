#include "config/load_error.h"

#include <exception>
#include <new>

#include "config/yaml_values.h"

namespace curlretry::config {

std::string current_load_error(std::string_view prefix) {
  const std::string p(prefix);
  try {
    throw;
  } catch (const ConfigError& e) {
    return e.message;
  } catch (const std::bad_alloc&) {
    return p + "out of memory while loading the config";
  } catch (const std::exception& e) {
    return p + "cannot load the config: " + e.what();
  } catch (...) {
    return p + "cannot load the config";
  }
}

}  // namespace curlretry::config
