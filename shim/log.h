// The shim's only output: one line per retry and a final line, on stderr or CURLRETRY_LOG_FILE.
// Callers pass text that is already free of secrets (see url_display.h); this module never sees
// headers or bodies.
#pragma once

#include <atomic>
#include <string_view>

#include "config/config.h"

namespace curlretry::shim::log {

// Called once, when the runtime configuration is known. Before that, only errors are printed.
void configure(const config::Settings& settings);

namespace detail {
// The configured level. Constant-initialised: usable before any constructor has run.
extern constinit std::atomic<int> g_level;
}  // namespace detail

// Inline: every phase change of every transfer asks it (the success path's cost, issue 27).
inline bool enabled(config::LogLevel level) {
  const int current = detail::g_level.load(std::memory_order_relaxed);
  return level != config::LogLevel::off && static_cast<int>(level) <= current;
}
void write(config::LogLevel level, std::string_view message);

}  // namespace curlretry::shim::log
