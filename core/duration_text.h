// Durations as a person reads them in a log line: "1500 ms" up to 10 s, "25 s" or "12.5 s" above,
// "2 h 5 min" from an hour on.
#pragma once

#include <string>

#include "core/outcome.h"

namespace curlretry::core {

std::string human_duration(Millis duration);

}  // namespace curlretry::core
