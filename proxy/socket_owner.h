// Who is at the other end of a loopback TCP connection: the kernel's socket tables (sock_diag,
// the interface behind `ss -e`) give the uid of the socket that accepted it, which is the uid
// of the listener, so the launcher learns whose server it reached before sending it a byte.
#pragma once

#include <sys/types.h>

#include <optional>

namespace curlretry::proxy {

// The owner uid of the socket at the far end of `connected` (a connected TCP socket whose peer
// is on this machine); nullopt when the kernel cannot say (no sock_diag, peer not local).
std::optional<uid_t> peer_socket_owner(int connected);

}  // namespace curlretry::proxy
