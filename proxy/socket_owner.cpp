#include "proxy/socket_owner.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

namespace curlretry::proxy {
namespace {

constexpr int kNewSynRecv = 12;  // the kernel's TCP_NEW_SYN_RECV (a request socket), not in uapi

void copy_address(const sockaddr_storage& from, __be16* port, __be32 address[4]) {
  if (from.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&from);
    *port = v4->sin_port;
    std::memcpy(address, &v4->sin_addr, sizeof v4->sin_addr);
  } else {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&from);
    *port = v6->sin6_port;
    std::memcpy(address, &v6->sin6_addr, sizeof v6->sin6_addr);
  }
}

enum class Lookup { found, none, failed };

// One exact lookup (no dump): the socket whose local end is our peer and remote end is us: its
// state, uid and inode when found; none when the kernel has no such socket; failed when the
// kernel did not answer (no sock_diag).
Lookup look_up(int netlink, const sockaddr_storage& local, const sockaddr_storage& peer, int* state, uid_t* uid,
               unsigned* inode) {
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST;
  message.request.sdiag_family = static_cast<__u8>(peer.ss_family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = ~0U;
  copy_address(peer, &message.request.id.idiag_sport, message.request.id.idiag_src);
  copy_address(local, &message.request.id.idiag_dport, message.request.id.idiag_dst);
  message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(netlink, &message, sizeof message, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return Lookup::failed;
  }
  alignas(nlmsghdr) char buffer[8192];
  const ssize_t n = ::recv(netlink, buffer, sizeof buffer, 0);
  if (n <= 0) return Lookup::failed;
  const auto* reply = reinterpret_cast<const nlmsghdr*>(buffer);
  for (int left = static_cast<int>(n); NLMSG_OK(reply, left); reply = NLMSG_NEXT(reply, left)) {
    if (reply->nlmsg_type == NLMSG_ERROR) {
      const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(reply));
      return error->error == -ENOENT ? Lookup::none : Lookup::failed;
    }
    if (reply->nlmsg_type != SOCK_DIAG_BY_FAMILY) return Lookup::failed;
    if (reply->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) return Lookup::failed;
    const auto* diag = static_cast<const inet_diag_msg*>(NLMSG_DATA(reply));
    *state = diag->idiag_state;
    *uid = diag->idiag_uid;
    *inode = diag->idiag_inode;
    return Lookup::found;
  }
  return Lookup::failed;
}

}  // namespace

Peer connected_peer(int connected) {
  sockaddr_storage local{};
  sockaddr_storage peer{};
  socklen_t local_size = sizeof local;
  socklen_t peer_size = sizeof peer;
  if (::getsockname(connected, reinterpret_cast<sockaddr*>(&local), &local_size) != 0 ||
      ::getpeername(connected, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0) {
    return {Peer::Kind::gone};  // ENOTCONN: the connection is over already
  }
  if (peer.ss_family != AF_INET && peer.ss_family != AF_INET6) return {};
  const int netlink = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (netlink < 0) return {};
  timeval timeout{1, 0};
  ::setsockopt(netlink, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  Peer out;
  // The accepting side may still be a request socket (no owner yet) for a moment after our
  // connect() returns: asked again, briefly. (A connecting side is established by the time its
  // connection is accepted.)
  for (int tries = 0; tries < 20; ++tries) {
    int state = 0;
    uid_t uid = 0;
    unsigned inode = 0;
    const Lookup found = look_up(netlink, local, peer, &state, &uid, &inode);
    if (found == Lookup::none) out.kind = Peer::Kind::gone;
    if (found != Lookup::found) break;
    if (state == TCP_SYN_RECV || state == kNewSynRecv) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    out = Peer{Peer::Kind::socket, uid, inode != 0};
    break;
  }
  ::close(netlink);
  return out;
}

namespace {

// The process of this user's with `inode` among its open files, as `ss -p` finds it: nullopt when
// none. Errors are skipped, never thrown: a process may end while its descriptors are read.
std::optional<pid_t> process_holding(unsigned inode) {
  namespace fs = std::filesystem;
  const std::string target = "socket:[" + std::to_string(inode) + "]";
  std::error_code ec;
  for (fs::directory_iterator process("/proc", ec), end; !ec && process != end; process.increment(ec)) {
    const std::string pid = process->path().filename().string();
    struct stat st {};
    if (pid.find_first_not_of("0123456789") != std::string::npos || ::stat(process->path().c_str(), &st) != 0 ||
        st.st_uid != ::getuid()) {
      continue;
    }
    std::error_code fd_error;
    for (fs::directory_iterator fd(process->path() / "fd", fd_error); !fd_error && fd != end; fd.increment(fd_error)) {
      std::error_code link_error;
      if (fs::read_symlink(fd->path(), link_error).native() == target) return std::stoi(pid);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<pid_t> listening_process(const sockaddr* address, socklen_t size) {
  sockaddr_storage listener{};
  if (size > sizeof listener) return std::nullopt;
  std::memcpy(&listener, address, size);
  sockaddr_storage anyone{};  // the kernel's exact lookup of an incoming connection from nowhere finds the listener
  anyone.ss_family = listener.ss_family;
  if (listener.ss_family != AF_INET && listener.ss_family != AF_INET6) return std::nullopt;
  const int netlink = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (netlink < 0) return std::nullopt;
  timeval timeout{1, 0};
  ::setsockopt(netlink, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  int state = 0;
  uid_t uid = 0;
  unsigned inode = 0;
  const Lookup found = look_up(netlink, anyone, listener, &state, &uid, &inode);
  ::close(netlink);
  if (found != Lookup::found || state != TCP_LISTEN || uid != ::getuid() || inode == 0) return std::nullopt;
  return process_holding(inode);
}

std::optional<uid_t> peer_socket_owner(int connected) {
  const Peer peer = connected_peer(connected);
  if (peer.kind != Peer::Kind::socket) return std::nullopt;
  return peer.uid;
}

}  // namespace curlretry::proxy
