#include "shim/credential_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

extern char** environ;

namespace curlretry::shim::credential {
namespace {

constexpr size_t kMaxOutput = 64 * 1024;
// Set in the command's environment: a command that itself makes requests under curlretry (and
// gets a 401 from the same rule) must not start another command, and so on without end.
constexpr const char* kNestedMarker = "CURLRETRY_AUTH_COMMAND=1";

}  // namespace

Command::~Command() {
  if (fd_ >= 0) close(fd_);
  if (pid_ > 0 && !exited_) {
    kill_group();
  }
}

void Command::kill_group() {
  kill(-pid_, SIGKILL);
  while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  exited_ = true;
}

bool Command::start(const config::AuthRefresh& auth, std::string& why) {
  program_ = auth.command.front();
  timeout_ms_ = auth.timeout_ms;
  if (getauxval(AT_SECURE) != 0) {
    why = "refused under secure execution (setuid/setgid program)";
    return false;
  }
  if (const char* nested = getenv("CURLRETRY_AUTH_COMMAND"); nested != nullptr && *nested != '\0') {
    why = "not run from inside another credential command";
    return false;
  }
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(const_cast<char*>(kNestedMarker));
  envp.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    why = "cannot create a pipe";
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, STDIN_FILENO);
  std::vector<char*> argv;
  for (const auto& arg : auth.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  // Its own process group: a command that times out is killed with everything it started, so
  // that nothing of it outlives the request holding the program's stderr.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    why = "cannot run " + program_;
    return false;
  }
  pid_ = pid;
  fd_ = fds[0];
  deadline_ = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  return true;
}

Command::State Command::step(int wait_ms, std::string& value, std::string& why) {
  if (pid_ <= 0) {
    why = "cannot run " + program_;
    return State::failed;
  }
  const auto until = std::min(deadline_, Clock::now() + std::chrono::milliseconds(wait_ms));
  for (;;) {
    if (fd_ >= 0) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      const int ready = poll(&p, 1, left > 0 ? static_cast<int>(left) : 0);
      if (ready < 0 && errno == EINTR) continue;
      if (ready > 0) {
        char buf[4096];
        const ssize_t n = read(fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
          out_.append(buf, std::min(static_cast<size_t>(n), kMaxOutput - std::min(out_.size(), kMaxOutput)));
          continue;
        }
        close(fd_);  // EOF (or an error): all it will say
        fd_ = -1;
      }
    }
    if (fd_ < 0 && !exited_) {
      const pid_t r = waitpid(pid_, &status_, WNOHANG);
      if (r == pid_) {
        exited_ = true;
      } else if (r < 0 && errno != EINTR) {
        status_ = 0;  // reaped by the program's own SIGCHLD handler: the output decides
        exited_ = true;
      }
    }
    if (exited_ && fd_ < 0) return finish(value, why);
    const auto now = Clock::now();
    if (now >= deadline_) {
      kill_group();
      why = program_ + " did not finish within " + std::to_string(timeout_ms_) + " ms";
      return State::failed;
    }
    if (now >= until) return State::running;
    if (fd_ < 0) {
      // Its stdout is closed but it has not exited yet: look again shortly.
      struct timespec ts{0, 5 * 1000 * 1000};
      nanosleep(&ts, nullptr);
    }
  }
}

Command::State Command::finish(std::string& value, std::string& why) {
  if (WIFSIGNALED(status_)) {
    why = program_ + " was killed by signal " + std::to_string(WTERMSIG(status_));
    return State::failed;
  }
  if (WIFEXITED(status_) && WEXITSTATUS(status_) != 0) {
    why = program_ + " exited with status " + std::to_string(WEXITSTATUS(status_));
    return State::failed;
  }
  std::string line = out_.substr(0, out_.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const bool control = std::any_of(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
  });
  if (line.empty() || control) {
    why = program_ + (line.empty() ? " printed no value" : " printed a value with control characters");
    return State::failed;
  }
  value = std::move(line);
  return State::done;
}

bool run(const config::AuthRefresh& auth, std::string& value, std::string& why) {
  Command command;
  if (!command.start(auth, why)) return false;
  for (;;) {
    switch (command.step(1000, value, why)) {
      case Command::State::running: continue;
      case Command::State::done: return true;
      case Command::State::failed: return false;
    }
  }
}

}  // namespace curlretry::shim::credential
