#include "proxy/ensure.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "proxy/identity.h"
#include "proxy/socket_owner.h"
#include "state/private_dir.h"

namespace curlretry::proxy {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

std::string address_and_port(const boost::asio::ip::tcp::endpoint& where) {
  return where.address().to_string() + ":" + std::to_string(where.port());
}

// Why what answers at `where` is refused, for the user: names the port, its owner when known,
// and what to do.
std::string refusal(const boost::asio::ip::tcp::endpoint& where, const Probe& found, const std::string& dir) {
  const std::string at = address_and_port(where);
  if (found.kind == Probe::Kind::foreign) {
    return at + " is held by " + found.detail + ", not by you (uid " + std::to_string(::getuid()) +
           "): it is not your curlretry proxy, and the command is not given its URL; stop it or choose another "
           "port with --listen";
  }
  return at + " answers but is not your curlretry proxy (" + found.detail + "; your proxies prove the secret in " +
         dir + "/" + kSecretFile +
         "); the command is not given its URL; stop what listens there or choose another "
         "port with --listen";
}

// LOCK_EX, given up after `seconds`: only this user can hold the lock (the file is in the
// private directory), but a stuck --ensure of theirs must not hang every later one.
bool lock_within(int fd, int seconds) {
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace

Probe probe(const boost::asio::ip::tcp::endpoint& where, int timeout_ms, const std::string& secret,
            const std::string& token) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Probe out{Probe::Kind::unproven, "no answer to the health request"};
  const int fd = ::socket(where.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return out;
  do {
    if (::connect(fd, where.data(), static_cast<socklen_t>(where.size())) != 0 && errno != EINPROGRESS) {
      if (errno == ECONNREFUSED) out = {Probe::Kind::nobody, ""};
      break;
    }
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) != 1) break;
    int error = 0;
    socklen_t len = sizeof error;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
      if (error == ECONNREFUSED) out = {Probe::Kind::nobody, ""};
      break;
    }
    // Before a byte is sent: another user's listener learns nothing, not even the nonce.
    const std::optional<uid_t> owner = peer_socket_owner(fd);
    if (owner && *owner != ::getuid()) {
      out = {Probe::Kind::foreign, state::describe_uid(*owner)};
      break;
    }
    const std::string nonce = make_nonce();
    std::string request = "GET /_curlretry/health HTTP/1.1\r\nHost: curlretry\r\nConnection: close\r\n" +
                          std::string(kNonceHeader) + ": " + nonce + "\r\n";
    // The token only to a listener the kernel says is ours (without sock_diag, none is sent).
    if (owner && !token.empty()) request += "Proxy-Authorization: Bearer " + token + "\r\n";
    request += "\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) break;
    std::string answer;
    char buffer[4096];
    while (answer.size() < 65536) {
      p = {fd, POLLIN, 0};
      if (::poll(&p, 1, remaining_ms(deadline)) != 1) break;
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      answer.append(buffer, static_cast<std::size_t>(n));
    }
    if (answer.empty()) break;
    if (answer.rfind("HTTP/1.1 200 ", 0) != 0) {
      out.detail = "its health answer is not 200";
      if (answer.rfind("HTTP/1.1 407 ", 0) == 0) out.detail += " but 407 (proxy.token differs?)";
      break;
    }
    const std::string expected = health_proof(secret, address_and_port(where), nonce);
    if (expected.empty() || answer.find("\"proof\":\"" + expected + "\"") == std::string::npos) {
      out.detail = "its health answer does not prove the secret";
      break;
    }
    out = {Probe::Kind::ours, ""};
  } while (false);
  ::close(fd);
  return out;
}

int ensure_running(const boost::asio::ip::tcp::endpoint& where, const std::vector<std::string>& args,
                   const std::string& token) {
  const std::string origin = "http://" + address_and_port(where);
  const state::Dir dir = state::open_private_dir(state::default_dir(std::getenv), "");
  if (!dir) {
    std::cerr << "curlretry: proxy --ensure: " << dir.error() << '\n';
    return 1;
  }
  std::string error;
  const std::string secret = load_or_create_secret(dir, error);
  if (secret.empty()) {
    std::cerr << "curlretry: proxy --ensure: " << error << '\n';
    return 1;
  }
  const std::string stem = "proxy-" + where.address().to_string() + "-" + std::to_string(where.port());
  const int lock = dir.open_file(stem + ".lock", O_RDWR | O_CREAT, error);
  if (lock < 0) {
    std::cerr << "curlretry: proxy --ensure: " << error << '\n';
    return 1;
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{lock};
  // Held until we return: a second --ensure waits here, then finds this one's proxy.
  if (!lock_within(lock, 30)) {
    std::cerr << "curlretry: proxy --ensure: " << dir.path() << "/" << stem
              << ".lock is held by another --ensure of yours for 30 s; giving up\n";
    return 1;
  }
  const Probe found = probe(where, 2000, secret, token);
  if (found.kind == Probe::Kind::ours) {
    std::cerr << "curlretry: proxy already running on " << origin << '\n';
    return 0;
  }
  if (found.kind != Probe::Kind::nobody) {
    std::cerr << "curlretry: proxy --ensure: " << refusal(where, found, dir.path()) << '\n';
    return 1;
  }
  const std::string log = dir.path() + "/" + stem + ".log";
  const int out = dir.open_file(stem + ".log", O_WRONLY | O_CREAT | O_APPEND, error);
  if (out < 0) {
    std::cerr << "curlretry: proxy --ensure: " << error << '\n';
    return 1;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "curlretry: proxy --ensure: fork: " << std::strerror(errno) << '\n';
    ::close(out);
    return 1;
  }
  if (child == 0) {
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) ::dup2(null, 0), ::dup2(null, 1);
    ::dup2(out, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>("curlretry-proxy"));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  ::close(out);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  Probe last;
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) {
      std::cerr << "curlretry: proxy --ensure: the proxy exited at start (status " << status << "); see " << log
                << '\n';
      return 1;
    }
    last = probe(where, 500, secret, token);
    if (last.kind == Probe::Kind::ours) {
      std::cerr << "curlretry: proxy started on " << origin << " (pid " << child << ", log " << log << ")\n";
      return 0;
    }
    // Someone else took the port while ours started: never theirs.
    if (last.kind == Probe::Kind::foreign) {
      std::cerr << "curlretry: proxy --ensure: " << refusal(where, last, dir.path()) << '\n';
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cerr << "curlretry: proxy --ensure: no proxy of yours answers on " << origin << " after 20 s"
            << (last.kind == Probe::Kind::unproven ? " (" + last.detail + ")" : std::string()) << "; see " << log
            << '\n';
  return 1;
}

}  // namespace curlretry::proxy
