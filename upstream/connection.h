// Serving one connection: requests in a keep-alive loop, each routed to a script step or to one
// of the helper endpoints (/count, /reset, /big, /ok, /arm).
#pragma once

#include <atomic>
#include <cstdint>

#include "upstream/arms.h"
#include "upstream/counters.h"
#include "upstream/stream.h"

namespace curlretry::upstream {

struct ServeContext {
  Counters& counters;
  std::atomic<std::uint64_t>& served;  // every request, for benches and sanity checks
  bool verbose = false;                // one stderr line per request
  Arms* arms = nullptr;                // /arm/...: paths that play a script (arms.h)
};

// Returns when the client closes, a step ends the connection, or the server stops.
void serve_connection(Stream& stream, ServeContext& context);

}  // namespace curlretry::upstream
