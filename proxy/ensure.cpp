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
#include <filesystem>
#include <iostream>
#include <thread>

namespace curlretry::proxy {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

std::string state_dir() {
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime == '/') {
    return std::string(runtime) + "/curlretry";
  }
  return "/tmp/curlretry-" + std::to_string(::getuid());
}

}  // namespace

bool healthy(const boost::asio::ip::tcp::endpoint& where, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const int fd = ::socket(where.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool ok = false;
  do {
    if (::connect(fd, where.data(), static_cast<socklen_t>(where.size())) != 0 && errno != EINPROGRESS) break;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) != 1) break;
    int error = 0;
    socklen_t len = sizeof error;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) break;
    const std::string request = "GET /_curlretry/health HTTP/1.1\r\nHost: curlretry\r\nConnection: close\r\n\r\n";
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
    ok = answer.rfind("HTTP/1.1 200 ", 0) == 0 && answer.find("\"status\":\"ok\"") != std::string::npos;
  } while (false);
  ::close(fd);
  return ok;
}

int ensure_running(const boost::asio::ip::tcp::endpoint& where, const std::vector<std::string>& args) {
  const std::string origin = "http://" + where.address().to_string() + ":" + std::to_string(where.port());
  const std::string dir = state_dir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  const std::string stem = dir + "/proxy-" + where.address().to_string() + "-" + std::to_string(where.port());
  const int lock = ::open((stem + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) {
    std::cerr << "curlretry: proxy --ensure: cannot lock " << stem << ".lock: " << std::strerror(errno) << '\n';
    return 1;
  }
  // Held until we return: a second --ensure waits here, then finds this one's proxy healthy.
  if (healthy(where, 2000)) {
    std::cerr << "curlretry: proxy already running on " << origin << '\n';
    ::close(lock);
    return 0;
  }
  const std::string log = stem + ".log";
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "curlretry: proxy --ensure: fork: " << std::strerror(errno) << '\n';
    return 1;
  }
  if (child == 0) {
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (null >= 0) ::dup2(null, 0), ::dup2(null, 1);
    if (out >= 0) ::dup2(out, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>("curlretry-proxy"));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) {
      std::cerr << "curlretry: proxy --ensure: the proxy exited at start (status " << status << "); see " << log
                << '\n';
      return 1;
    }
    if (healthy(where, 500)) {
      std::cerr << "curlretry: proxy started on " << origin << " (pid " << child << ", log " << log << ")\n";
      ::close(lock);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cerr << "curlretry: proxy --ensure: no healthy proxy on " << origin << " after 20 s; see " << log << '\n';
  return 1;
}

}  // namespace curlretry::proxy
