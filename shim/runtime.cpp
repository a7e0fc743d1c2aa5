#include "shim/runtime.h"

#include <string>

#include "shim/events.h"
#include "shim/log.h"
#include "shim/reach_marker.h"

namespace curlretry::shim {
namespace {

Runtime* load_runtime() {
  mark_reached();
  auto* rt = new Runtime();  // leaked on purpose: used until the very last atexit handler
  config::LoadResult result;
  try {
    result = config::load(config::Environment::process());
  } catch (...) {
    result.error = "internal error while reading the configuration";
  }
  if (!result.ok()) {
    log::configure(config::Settings{});  // errors only, on stderr
    log::write(config::LogLevel::error, result.error + "; retries are off for this process (pass-through)");
    return rt;
  }
  rt->config = std::move(*result.config);
  log::configure(rt->config.settings);
  events::configure(rt->config.settings.events_file);
  for (const auto& warning : result.warnings) log::write(config::LogLevel::warn, warning);
  rt->active = !rt->config.settings.disabled;
  return rt;
}

}  // namespace

const Runtime& runtime() {
  // A function-local static rather than std::call_once: its fast path is one acquire load,
  // where call_once goes through a global-dynamic TLS access on every transfer.
  static Runtime* const rt = load_runtime();
  return *rt;
}

}  // namespace curlretry::shim
