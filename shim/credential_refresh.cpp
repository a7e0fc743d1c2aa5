#include "shim/credential_refresh.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "shim/log.h"
#include "shim/reentry_guard.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

extern char** environ;

namespace curlretry::shim::credential {
namespace {

constexpr size_t kMaxOutput = 64 * 1024;
// Set in the command's environment: a command that itself makes requests under curlretry (and
// gets a 401 from the same rule) must not start another command, and so on without end.
constexpr const char* kNestedMarker = "CURLRETRY_AUTH_COMMAND=1";

struct Cache {
  std::mutex mutex;
  std::map<std::string, std::string> values;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: transfers may run during exit
  return *c;
}

std::atomic<bool> g_any{false};

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `pid` until `deadline`, then kills it. True with `status` set when it exited.
bool reap(pid_t pid, Clock::time_point deadline, int& status) {
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) {
      status = 0;  // reaped by the program's own SIGCHLD handler: the output decides
      return errno == ECHILD;
    }
    if (Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return false;
    }
    struct timespec ts{0, 5 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
}

}  // namespace

bool run(const config::AuthRefresh& auth, std::string& value, std::string& why) {
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
    why = "cannot run " + auth.command.front();
    return false;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(auth.timeout_ms);
  std::string out;
  bool timed_out = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, ms_left(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;
      break;
    }
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, std::min(static_cast<size_t>(n), kMaxOutput - std::min(out.size(), kMaxOutput)));
  }
  close(fds[0]);
  int status = 0;
  const bool exited = reap(pid, timed_out ? Clock::now() : deadline, status);
  if (timed_out || !exited) {
    why = auth.command.front() + " did not finish within " + std::to_string(auth.timeout_ms) + " ms";
    return false;
  }
  if (WIFSIGNALED(status)) {
    why = auth.command.front() + " was killed by signal " + std::to_string(WTERMSIG(status));
    return false;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    why = auth.command.front() + " exited with status " + std::to_string(WEXITSTATUS(status));
    return false;
  }
  std::string line = out.substr(0, out.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const bool control = std::any_of(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
  });
  if (line.empty() || control) {
    why = auth.command.front() + (line.empty() ? " printed no value" : " printed a value with control characters");
    return false;
  }
  value = std::move(line);
  return true;
}

std::optional<std::string> cached(const std::string& rule) {
  if (!any_cached()) return std::nullopt;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.values.find(rule);
  if (it == c.values.end()) return std::nullopt;
  return it->second;
}

void store(const std::string& rule, const std::string& value) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.values[rule] = value;
  g_any.store(true, std::memory_order_release);
}

void forget(const std::string& rule) {
  if (!any_cached()) return;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.values.erase(rule);
}

bool any_cached() { return g_any.load(std::memory_order_acquire); }

}  // namespace curlretry::shim::credential

namespace curlretry::shim {

bool Transfer::wants_refresh(int status) const {
  if (rule_ == nullptr || auth_tried_ || !rule_->auth.enabled()) return false;
  const auto& on = rule_->auth.on;
  return std::find(on.begin(), on.end(), status) != on.end();
}

void Transfer::refresh_credential(core::Verdict& verdict) {
  if (verdict.action != core::Action::give_up || committed_ || !wants_refresh(response_.status)) return;
  auth_tried_ = true;
  const config::AuthRefresh& auth = rule_->auth;
  const std::string who = method_ + " " + display_ + " -> " + verdict.what;
  std::string value, why;
  if (!credential::run(auth, value, why)) {
    credential::forget(rule_->name);
    log::write(config::LogLevel::warn, who + ": cannot refresh " + auth.header + ": " + why +
                                           "; giving up with the upstream's response");
    return;
  }
  credential::store(rule_->name, value);
  override_.set_header(auth.header, std::move(value));
  log::write(config::LogLevel::info, who + ": refreshed " + auth.header + ", retrying once");
  verdict.action = core::Action::retry;
  verdict.delay = core::Millis{0};
  verdict.reason = "auth-refresh";
}

void Transfer::apply_cached_credential() {
  if (!credential::any_cached() || runtime_->config.rules.empty()) return;
  // Before the first attempt libcurl has no effective URL or method yet: the program's own.
  UrlParts parts = split_url(host.url);
  std::string method = !host.custom_request.empty()               ? host.custom_request
                       : host.post_active                          ? "POST"
                                                                   : "GET";
  config::RequestHeaders headers;
  const bool by_header = runtime_->config.has_header_rules();
  if (by_header) headers = read_request_headers(host.http_header);
  const config::Rule* rule = runtime_->config.match(method, parts.host, parts.path, by_header ? &headers : nullptr);
  if (rule == nullptr || !rule->auth.enabled()) return;
  if (auto value = credential::cached(rule->name)) {
    override_.set_header(rule->auth.header, std::move(*value));
    override_.apply(*api_, easy_, host);
  }
}

}  // namespace curlretry::shim
