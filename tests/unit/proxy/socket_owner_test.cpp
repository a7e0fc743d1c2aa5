// The listener's process as the launcher finds it before it would go through a loopback proxy
// named by HTTPS_PROXY (proxy/socket_owner.h): from the kernel and /proc, without a connection.
#include "proxy/socket_owner.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>

namespace curlretry::proxy {
namespace {

struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  ~Listener() { ::close(fd); }
  // Bound to 127.0.0.1 on a port the kernel picks; listening when `listen` is true.
  bool bind(bool listen) {
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    return fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
           ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0 && (!listen || ::listen(fd, 1) == 0);
  }
};

TEST(ListeningProcess, ThisProcessForItsOwnListener) {
  Listener l;
  ASSERT_TRUE(l.bind(true));
  const auto pid = listening_process(reinterpret_cast<const sockaddr*>(&l.address), sizeof l.address);
  ASSERT_TRUE(pid.has_value()) << "no sock_diag on this kernel?";
  EXPECT_EQ(*pid, ::getpid());
}

TEST(ListeningProcess, NothingForABoundSocketThatDoesNotListen) {
  Listener l;
  ASSERT_TRUE(l.bind(false));
  EXPECT_FALSE(listening_process(reinterpret_cast<const sockaddr*>(&l.address), sizeof l.address).has_value());
}

TEST(ListeningProcess, NothingForAnAddressThatIsNotInet) {
  sockaddr_storage unix_address{};
  unix_address.ss_family = AF_UNIX;
  EXPECT_FALSE(listening_process(reinterpret_cast<const sockaddr*>(&unix_address), sizeof unix_address).has_value());
}

}  // namespace
}  // namespace curlretry::proxy
