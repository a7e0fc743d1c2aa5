// The process of a rule's `auth:` command: spawned without a shell (stdin closed, stderr passed
// through, in its own process group), read without blocking the caller beyond what it asks, and
// killed with everything it started when its time is up or nobody needs it any more.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "config/agent.h"

namespace curlretry::shim::credential {

class Command {
 public:
  Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  ~Command();  // a command still running is killed and reaped

  // False with `why` set when it cannot run (secure execution, nested in another command,
  // no such program).
  bool start(const config::AuthRefresh& auth, std::string& why);

  enum class State : unsigned char { running, done, failed };
  // Reads what the command wrote, waiting at most `wait_ms` (0 = not at all). `done`: `value` is
  // its first stdout line; `failed`: `why` says what went wrong, without anything it printed.
  State step(int wait_ms, std::string& value, std::string& why);

 private:
  using Clock = std::chrono::steady_clock;
  void kill_group();
  State finish(std::string& value, std::string& why);

  pid_t pid_ = -1;
  int fd_ = -1;  // its stdout; -1 once at EOF
  int status_ = 0;
  bool exited_ = false;
  Clock::time_point deadline_{};
  long long timeout_ms_ = 0;
  std::string program_;
  std::string out_;
};

// start() then step() until it is over: the whole command, synchronously.
bool run(const config::AuthRefresh& auth, std::string& value, std::string& why);

}  // namespace curlretry::shim::credential
