// Who is at the other end of a loopback TCP connection: the kernel's socket tables (sock_diag,
// the interface behind `ss -e`) give the uid of the socket that accepted it, which is the uid
// of the listener, so the launcher learns whose server it reached before sending it a byte.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <optional>

namespace curlretry::proxy {

// The socket at the far end of `connected` (a connected TCP socket whose peer is on this machine).
struct Peer {
  // socket: the kernel has it; gone: it has none (the peer closed and it is gone, or the peer is
  // not local); unknown: the kernel did not say (no sock_diag).
  enum class Kind { unknown, gone, socket };
  Kind kind = Kind::unknown;
  uid_t uid = 0;
  // A process holds it (it has an inode). A socket its process closed (or a time-wait entry,
  // which the kernel reports as uid 0) has none, and then its uid says nothing about who is there;
  // a connection not accepted yet has none either, with its listener's uid.
  bool held = false;
};
Peer connected_peer(int connected);

// The process of this user's that holds the socket listening at `address` (an IPv4 or IPv6
// address and port), found in the kernel's socket tables and /proc without a connection to it:
// nullopt when nothing listens there, another user's socket does, or the kernel cannot say.
std::optional<pid_t> listening_process(const sockaddr* address, socklen_t size);

// The owner uid of the socket at the far end of `connected` (the launcher asks it of the socket
// that accepted its connection: held or still in the accept queue); nullopt when the kernel
// cannot say (no sock_diag, peer not local).
std::optional<uid_t> peer_socket_owner(int connected);

}  // namespace curlretry::proxy
