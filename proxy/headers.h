// Which headers cross the proxy. Hop-by-hop headers (RFC 9110 §7.6.1: Connection and the names
// it lists, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade) belong to one
// connection and stop here, in both directions; the proxy frames each side itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ascii.h"

namespace curlretry::proxy {

// Header names compare as core/ascii.h compares them (its one home).
using core::ascii::iequals;

// The names a Connection header lists, lower case.
std::vector<std::string> connection_tokens(std::string_view connection_value);

// True for a hop-by-hop header, or one listed in `connection_listed`.
bool hop_by_hop(std::string_view name, const std::vector<std::string>& connection_listed);

// A response header that the proxy recomputes for the client (framing), beyond hop-by-hop.
bool framing_header(std::string_view name);

}  // namespace curlretry::proxy
