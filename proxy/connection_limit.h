// How many client connections the proxy holds at once (proxy.max_connections), against the
// descriptors the process may open. Every proxied stream takes two (the client's socket and
// libcurl's upstream one), so the open-files limit, raised at start from its soft to its hard
// value (as nginx's worker_rlimit_nofile and HAProxy do), decides what can be held; the config
// may ask for less, never silently for more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace curlretry::proxy {

// Descriptors kept out of the per-connection budget: stdio, the epoll and timer descriptors, log
// and event files, the local CA's files, libcurl's resolver wake-up pairs, and the short-lived
// sockets of connections being answered 503 (Server::kRefusalSlots).
inline constexpr std::uint64_t kReservedDescriptors = 96;
// The built-in limit never goes past this, whatever the open-files limit: enough for 10,000
// concurrent LLM streams with room, while a runaway local client cannot make the proxy hold
// more than ~0.5 GiB of idle sessions (~27 KiB each, bench/README.md "Proxy on LLM traffic").
inline constexpr std::size_t kDefaultMaxConnections = 16384;

// The soft RLIMIT_NOFILE raised to the hard one; the limit now in force (0: unknown).
std::uint64_t raise_open_files_limit();

struct ConnectionLimit {
  std::size_t value = 0;
  std::string warning;  // non-empty: the configured value did not fit the descriptors and was lowered
};

// `configured` (0: not set; `where` names it, "FILE:LINE:COL") against `open_files`: the
// connections whose two descriptors fit besides kReservedDescriptors, at most
// kDefaultMaxConnections when not configured, at least 1.
ConnectionLimit connection_limit(std::size_t configured, const std::string& where, std::uint64_t open_files);

}  // namespace curlretry::proxy
