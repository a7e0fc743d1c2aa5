#include "shim/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>

#include "core/log_text.h"
#include "shim/fork_guard.h"
#include "shim/owned_fd.h"

namespace curlretry::shim::log {

constinit std::atomic<int> detail::g_level{static_cast<int>(config::LogLevel::error)};

namespace {

// Writes to a private duplicate of the destination fd, and checks before every line that the fd
// still names the file it was opened on: a host that closes its fds and opens new ones must
// never find our log lines in its own socket or file.
class CheckedFdSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  explicit CheckedFdSink(int fd) : fd_(fd) { remember_identity(); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    if (!still_ours()) return;
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  void flush_() override {}

 private:
  void remember_identity() {
    valid_ = file_identity(fd_, dev_, ino_);
  }
  bool still_ours() const { return valid_ && names_file(fd_, dev_, ino_); }

  int fd_;
  bool valid_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

// One lock for the logger's creation and for every line: the sink itself is lock-free.
std::mutex g_mutex;
spdlog::logger* g_logger = nullptr;  // leaked on purpose: hosts log from atexit handlers

// What fd 2 was when the process started (or when the shim was first used, if that came first).
// A host that closes its descriptors and opens a file of its own may get fd 2 for it; our lines
// must then go nowhere rather than into its file.
struct StderrIdentity {
  bool captured = false;
  bool open = false;
  dev_t dev = 0;
  ino_t ino = 0;
};
StderrIdentity g_stderr;  // constant-initialised: usable before any constructor has run

void capture_stderr_identity() {
  if (g_stderr.captured) return;
  g_stderr.open = file_identity(STDERR_FILENO, g_stderr.dev, g_stderr.ino);
  g_stderr.captured = true;
}

__attribute__((constructor)) void capture_stderr_at_start() { capture_stderr_identity(); }

int open_stderr() {
  capture_stderr_identity();
  if (!g_stderr.open || !names_file(STDERR_FILENO, g_stderr.dev, g_stderr.ino)) return -1;
  return ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
}

// The log file opens as the attempt log does (open_owned: never fd 0-2, a FIFO without a reader
// refused rather than waited for, no controlling terminal), or the program's stderr.
int open_destination(const std::string& file, int& open_errno, state::Planted& planted) {
  if (file.empty()) return open_stderr();
  dev_t dev = 0;
  ino_t ino = 0;
  return open_owned(file.c_str(), dev, ino, open_errno, planted);
}

spdlog::logger* make_logger(const std::string& file) {
  int open_errno = 0;
  state::Planted planted;
  int fd = open_destination(file, open_errno, planted);
  bool fell_back = fd < 0 && !file.empty();
  if (fell_back) fd = open_stderr();
  const bool to_file = !fell_back && !file.empty();
  auto sink = std::make_shared<CheckedFdSink>(fd);
  auto* logger = new spdlog::logger("curlretry", sink);
  // A log file collects lines of many processes over days: each says when (ISO 8601, UTC) and
  // which process. On stderr the line sits among the program's own output, which says that.
  if (to_file) {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ curlretry[%P]: %v", spdlog::pattern_time_type::utc);
  } else {
    logger->set_pattern("curlretry: %v");
  }
  logger->set_level(spdlog::level::trace);
  // Once (the logger is made once): the lines the user looks for in the file are here instead.
  if (fell_back) {
    logger->log(spdlog::level::warn, "cannot open the log file {} ({}); logging to stderr instead", core::log_text::escape(file),
                failure_text(open_errno, planted));
  }
  return logger;
}

spdlog::level::level_enum to_spdlog(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::error: return spdlog::level::err;
    case config::LogLevel::warn: return spdlog::level::warn;
    case config::LogLevel::info: return spdlog::level::info;
    case config::LogLevel::debug: return spdlog::level::debug;
    case config::LogLevel::off: break;
  }
  return spdlog::level::off;
}

// Not a std::string: the shim may be entered from another library's constructor before ours
// have run, and only constant-initialised globals are safe then.
std::string& log_file() {
  static std::string* file = new std::string();
  return *file;
}

}  // namespace

std::mutex& log_mutex() {
  static std::mutex& m = [] () -> std::mutex& {
    guard_across_fork(g_mutex);
    return g_mutex;
  }();
  return m;
}

void configure(const config::Settings& settings) {
  std::lock_guard lock(log_mutex());
  log_file() = settings.log_file;
  detail::g_level.store(static_cast<int>(settings.log_level), std::memory_order_relaxed);
}

void write(config::LogLevel level, std::string_view message) {
  if (!enabled(level)) return;
  std::lock_guard lock(log_mutex());
  try {
    if (g_logger == nullptr) g_logger = make_logger(log_file());
    // Escaped here, at the one sink: a line carries methods, hosts, paths and error texts that
    // the network or the program chose, and none may start a line or a terminal escape.
    g_logger->log(to_spdlog(level), "{}", core::log_text::escape(message));
  } catch (...) {
    // Logging must never take the host down.
  }
}

}  // namespace curlretry::shim::log
