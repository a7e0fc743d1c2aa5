#include "cli/reach_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace curlretry::cli {
namespace {

// The watcher must not keep the caller's pipes (a jobserver, a test's stdout) open after them.
void close_all_but(int a, int b) {
  const int low = std::min(a, b);
  const int high = std::max(a, b);
  if (low > 3) ::close_range(3, static_cast<unsigned>(low - 1), 0);
  if (high > low + 1) ::close_range(static_cast<unsigned>(low + 1), static_cast<unsigned>(high - 1), 0);
  ::close_range(static_cast<unsigned>(high + 1), ~0U, 0);
}

[[noreturn]] void watch(int exec_result, int pidfd, const std::string& dir, const std::string& marker,
                        const std::string& message) {
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
  }
  close_all_but(exec_result, pidfd);
  char byte = 0;
  ssize_t n = 0;
  do n = ::read(exec_result, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n == 0) {  // the exec closed the launcher's end: the command runs under our pid
    struct pollfd exited {pidfd, POLLIN, 0};
    while (::poll(&exited, 1, -1) < 0 && errno == EINTR) {
    }
    struct stat st {};
    if (::stat(marker.c_str(), &st) != 0) {
      ssize_t w = 0;
      do w = ::write(STDERR_FILENO, message.data(), message.size());
      while (w < 0 && errno == EINTR);
    }
  }
  ::unlink(marker.c_str());
  ::rmdir(dir.c_str());
  ::_exit(0);
}

}  // namespace

std::string shell_words(const std::vector<std::string>& command) {
  std::string out;
  for (const std::string& word : command) {
    const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                "0123456789_./:=@%+,-") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string unreached_message(const std::vector<std::string>& command, const std::vector<std::string>& configs) {
  const std::string name = std::filesystem::path(command.at(0)).filename().string();
  std::vector<std::string> launcher{"curlretry"};
  for (const std::string& file : configs) launcher.insert(launcher.end(), {"--config", file});
  std::vector<std::string> again = launcher;
  again.insert(again.end(), {"--proxy", "--"});
  again.insert(again.end(), command.begin(), command.end());
  launcher.emplace_back("--");
  // What works today (cli/launch_auto.cpp): `curlretry -- PROGRAM` sends a program that will not
  // load libcurl through the shared proxy with the built-in providers intercepted, no config; a
  // program this one starts is not diagnosed, so it must be named itself. `--proxy` on this
  // command needs a config that names what to route or intercept (without one it exits 125).
  return "curlretry: " + name + " never used libcurl, so curlretry had nothing to retry.\n"
         "curlretry: if it starts a program without libcurl (node, bun, deno, python without pycurl, a Go or Rust "
         "binary), run that one as " + shell_words(launcher) + " PROGRAM [ARGS...]: it then goes through the shared "
         "local proxy, the providers curlretry knows intercepted, no config needed\n"
         "curlretry: for " + name + "'s own requests, name their hosts in proxy.intercept (or proxy.routes) of the "
         "config, then: " + shell_words(again) + "\n"
         "curlretry: the preload reaches programs that call the system's libcurl (curl, git, PHP's curl, pycurl); "
         "'curlretry doctor " + name + "' says what this one uses.\n";
}

std::optional<ReachWatch> start_reach_watch(const std::vector<std::string>& command,
                                            const std::vector<std::string>& configs) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp") + "/curlretry-reach-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return std::nullopt;
  const std::string dir = pattern;
  const std::string marker = dir + "/reached";
  const std::string message = unreached_message(command, configs);  // built before the fork

  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  int exec_result[2] = {-1, -1};
  if (pidfd < 0 || ::pipe2(exec_result, O_CLOEXEC) != 0) {
    if (pidfd >= 0) ::close(pidfd);
    ::rmdir(dir.c_str());
    return std::nullopt;
  }
  const pid_t middle = ::fork();
  if (middle == 0) {
    if (::fork() != 0) ::_exit(0);
    ::close(exec_result[1]);
    watch(exec_result[0], pidfd, dir, marker, message);
  }
  ::close(exec_result[0]);
  ::close(pidfd);
  if (middle < 0) {
    ::close(exec_result[1]);
    ::rmdir(dir.c_str());
    return std::nullopt;
  }
  while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
  }
  ::setenv("CURLRETRY_REACHED", marker.c_str(), 1);
  return ReachWatch{exec_result[1]};
}

void cancel_reach_watch(const ReachWatch& watch) {
  const char byte = 1;
  while (::write(watch.exec_failed_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(watch.exec_failed_fd);
}

}  // namespace curlretry::cli
