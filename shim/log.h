// The shim's only output: one line per retry and a final line, on stderr or CURLRETRY_LOG_FILE.
// Callers pass text that is already free of secrets (see url_display.h); this module never sees
// headers or bodies.
#pragma once

#include <string_view>

#include "config/config.h"

namespace curlretry::shim::log {

// Called once, when the runtime configuration is known. Before that, only errors are printed.
void configure(const config::Settings& settings);

bool enabled(config::LogLevel level);
void write(config::LogLevel level, std::string_view message);

}  // namespace curlretry::shim::log
