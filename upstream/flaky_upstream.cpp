// The server loop: one acceptor thread, one detached thread per connection (simple blocking code
// for hang/sse/TLS; hundreds of concurrent keep-alive connections are well within reach).
#include "upstream/flaky_upstream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "upstream/connection.h"
#include "upstream/counters.h"
#include "upstream/fail.h"
#include "upstream/stream.h"
#include "upstream/tls.h"

namespace curlretry::upstream {
namespace {

constexpr int kBacklog = 1024;
constexpr std::size_t kThreadStack = 512 * 1024;  // a connection needs little; 8 MiB x 1000 adds up

// Server threads take no asynchronous signals: the host (main.cpp, or the curlretry CLI) owns
// them, and SIGPIPE from a TLS write to a vanished client becomes a plain EPIPE instead.
void block_signals() {
  sigset_t set;
  sigfillset(&set);
  for (int sync : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) sigdelset(&set, sync);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool fail_errno(std::string* error, const std::string& what) { return fail(error, what + ": " + std::strerror(errno)); }

// Whether `address` is assigned to a loopback interface (IFF_LOOPBACK): the only ones we bind.
bool on_loopback_interface(const in_addr& address) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* i = list; i && !found; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_LOOPBACK)) continue;
    found = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == address.s_addr;
  }
  ::freeifaddrs(list);
  return found;
}

}  // namespace

struct FlakyUpstream::Impl {
  Options options;
  int listen_fd = -1;
  int stop_read = -1;  // readable once stop() begins: wakes the acceptor and every wait
  int stop_write = -1;
  int port = 0;
  std::unique_ptr<TlsContext> tls;
  std::string certificate_pem;
  Counters counters;
  Arms arms;
  std::atomic<std::uint64_t> served{0};
  std::thread acceptor;
  bool running = false;

  std::mutex mutex;
  std::condition_variable idle;
  std::unordered_set<int> connections;  // open connection fds, guarded by mutex

  bool listen_loopback(int wanted_port, std::string* error);
  void accept_loop();
  bool spawn(int fd);
  void serve(int fd);
  void close_fds();
};

bool FlakyUpstream::Impl::listen_loopback(int wanted_port, std::string* error) {
  listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) return fail_errno(error, "socket");
  int one = 1;
  ::setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  const std::string& where = options.listen_address;
  if (::inet_pton(AF_INET, where.c_str(), &address.sin_addr) != 1) {
    return fail(error, "listen address '" + where + "' is not an IPv4 address");
  }
  if (!on_loopback_interface(address.sin_addr)) {  // loopback only, never a real interface
    return fail(error, "listen address " + where + " is not on a loopback interface");
  }
  address.sin_port = htons(static_cast<std::uint16_t>(wanted_port));
  if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return fail_errno(error, "bind " + where + ":" + std::to_string(wanted_port));
  }
  if (::listen(listen_fd, kBacklog) != 0) return fail_errno(error, "listen");
  socklen_t size = sizeof address;
  ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &size);
  port = ntohs(address.sin_port);
  return true;
}

void FlakyUpstream::Impl::accept_loop() {
  block_signals();
  for (;;) {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {stop_read, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors or memory: back off briefly instead of spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    {
      std::lock_guard lock(mutex);
      connections.insert(fd);  // before the thread exists, so stop() always sees it
    }
    if (!spawn(fd)) {
      std::lock_guard lock(mutex);
      connections.erase(fd);
      ::close(fd);
      idle.notify_all();
    }
  }
}

bool FlakyUpstream::Impl::spawn(int fd) {
  struct Start {
    Impl* impl;
    int fd;
  };
  auto* start = new Start{this, fd};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kThreadStack);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  int rc = pthread_create(
      &thread, &attr,
      [](void* arg) -> void* {
        Start s = *static_cast<Start*>(arg);
        delete static_cast<Start*>(arg);
        s.impl->serve(s.fd);
        return nullptr;
      },
      start);
  pthread_attr_destroy(&attr);
  if (rc != 0) delete start;
  return rc == 0;
}

void FlakyUpstream::Impl::serve(int fd) {
  block_signals();
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // SSE events and small replies
  {
    Stream stream(fd, tls ? tls->get() : nullptr, stop_read);
    if (stream.handshake()) {
      ServeContext context{counters, served, options.verbose, &arms};
      serve_connection(stream, context);
    } else {
      stream.finish_clean();
    }
  }
  // Unregister and close under the lock: stop() never shuts down a recycled descriptor, and
  // once the set is empty this thread touches nothing of ours again.
  std::lock_guard lock(mutex);
  connections.erase(fd);
  ::close(fd);
  if (connections.empty()) idle.notify_all();
}

void FlakyUpstream::Impl::close_fds() {
  for (int* fd : {&listen_fd, &stop_read, &stop_write}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

FlakyUpstream::FlakyUpstream() : impl_(std::make_unique<Impl>()) {}

FlakyUpstream::~FlakyUpstream() { stop(); }

bool FlakyUpstream::start(const Options& options, std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  Impl& s = *impl_;
  if (s.running) return fail(error, "already started");
  s.options = options;
  if (options.tls) {
    s.tls = std::make_unique<TlsContext>();
    if (!s.tls->init(options.tls_names, error)) return false;
    s.certificate_pem = s.tls->certificate_pem();
    if (!options.cert_out.empty()) {
      std::ofstream out(options.cert_out, std::ios::binary | std::ios::trunc);
      out << s.certificate_pem;
      if (!out.flush()) return fail(error, "cannot write the certificate to " + options.cert_out);
    }
  } else if (!options.cert_out.empty()) {
    return fail(error, "a certificate file needs TLS");
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return fail_errno(error, "pipe2");
  s.stop_read = pipe_fds[0];
  s.stop_write = pipe_fds[1];
  if (!s.listen_loopback(options.port, error)) {
    s.close_fds();
    return false;
  }
  s.acceptor = std::thread([&s] { s.accept_loop(); });
  s.running = true;
  return true;
}

int FlakyUpstream::port() const { return impl_->port; }

const std::string& FlakyUpstream::certificate_pem() const { return impl_->certificate_pem; }

void FlakyUpstream::stop() {
  Impl& s = *impl_;
  if (!s.running) return;
  char byte = 1;
  while (::write(s.stop_write, &byte, 1) < 0 && errno == EINTR) {
  }
  s.acceptor.join();  // after this, no new connection can appear
  {
    std::unique_lock lock(s.mutex);
    // Unblocks reads and writes (and TLS handshakes); hang/sse/linger waits watch stop_read.
    for (int fd : s.connections) ::shutdown(fd, SHUT_RDWR);
    s.idle.wait(lock, [&s] { return s.connections.empty(); });
  }
  s.close_fds();
  s.running = false;
}

std::uint64_t FlakyUpstream::count(const std::string& key) const { return impl_->counters.get(key); }

std::uint64_t FlakyUpstream::served() const { return impl_->served.load(std::memory_order_relaxed); }

}  // namespace curlretry::upstream
