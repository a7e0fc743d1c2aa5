#include "shim/events.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/civil_date.h"
#include "core/attempt_log.h"
#include "core/json_text.h"
#include "core/log_text.h"
#include "shim/clock.h"
#include "shim/fork_guard.h"
#include "shim/log.h"
#include "shim/owned_fd.h"

namespace curlretry::shim::events {
namespace {

// --- formatting into a fixed buffer ------------------------------------------------------------

class Line {
 public:
  Line(char* out, std::size_t capacity) : out_(out), cap_(capacity) {}

  void raw(std::string_view s) {
    for (char c : s) put(c);
  }
  void number(long long v) {
    char digits[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (v < 0) put('-');
    while (n > 0) put(digits[--n]);
  }
  // A JSON string of at most `budget` output bytes (quotes excluded), cut between characters.
  void string(std::string_view s, std::size_t budget) {
    put('"');
    std::size_t used = 0;
    for (std::size_t i = 0; i < s.size();) {
      const core::json_text::Piece piece = core::json_text::piece_at(s, i);
      if (used + piece.size > budget) break;
      for (std::size_t k = 0; k < piece.size; ++k) put(piece.bytes[k]);
      used += piece.size;
      i += piece.consumed;
    }
    put('"');
  }
  // ,"name": (or {"name": for the first field)
  void key(std::string_view name, bool first = false) {
    raw(first ? "{\"" : ",\"");
    raw(name);
    raw("\":");
  }
  bool overflowed() const { return overflow_; }
  std::size_t size() const { return pos_; }

 private:
  void put(char c) {
    if (pos_ < cap_) out_[pos_++] = c;
    else overflow_ = true;
  }
  char* out_;
  std::size_t cap_;
  std::size_t pos_ = 0;
  bool overflow_ = false;
};

// "2025-06-01T12:00:00.123Z" from milliseconds since the epoch (proleptic Gregorian, UTC).
void put_time(Line& line, long long unix_ms) {
  long long ms = unix_ms % 1000;
  long long secs = unix_ms / 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  long long days = secs / 86400;
  long long sod = secs % 86400;
  if (sod < 0) {
    sod += 86400;
    days -= 1;
  }
  const core::CivilDate date = core::civil_from_days(days);
  const long long y = date.year, m = date.month, d = date.day;
  auto two = [&](long long v) {
    char s[2] = {static_cast<char>('0' + v / 10), static_cast<char>('0' + v % 10)};
    line.raw(std::string_view(s, 2));
  };
  line.raw("\"");
  line.number(y);
  line.raw("-");
  two(m);
  line.raw("-");
  two(d);
  line.raw("T");
  two(sod / 3600);
  line.raw(":");
  two(sod / 60 % 60);
  line.raw(":");
  two(sod % 60);
  line.raw(".");
  char frac[3] = {static_cast<char>('0' + ms / 100), static_cast<char>('0' + ms / 10 % 10),
                  static_cast<char>('0' + ms % 10)};
  line.raw(std::string_view(frac, 3));
  line.raw("Z\"");
}

// --- the destination ----------------------------------------------------------------------------

enum State : int { kOff, kConfigured, kOpen, kFailed };

std::atomic<int> g_state{kOff};
std::atomic<int> g_fd{-1};
std::atomic<dev_t> g_dev{0};
std::atomic<ino_t> g_ino{0};
char g_path[4096];
std::mutex g_mutex;  // only for opening: the write path takes no lock

std::mutex& open_mutex() {
  static std::mutex& m = []() -> std::mutex& {
    guard_across_fork(g_mutex);
    return g_mutex;
  }();
  return m;
}

bool same_file(int fd) {
  return names_file(fd, g_dev.load(std::memory_order_relaxed), g_ino.load(std::memory_order_relaxed));
}

// Opens (or, when the host closed our descriptor and reused its number, reopens) the file.
// Returns the descriptor, or -1 when the log is off; `failed_errno` is set when this call is the
// one that found the file cannot be opened (the caller reports it, outside the lock: the log
// has its own lock, and fork handlers take both).
int open_file(int& failed_errno, state::Planted& planted) {
  std::lock_guard lock(open_mutex());
  int state = g_state.load(std::memory_order_acquire);
  int fd = g_fd.load(std::memory_order_acquire);
  if (state == kOpen && same_file(fd)) return fd;  // another thread was first
  if (state != kConfigured && state != kOpen) return -1;
  dev_t dev = 0;
  ino_t ino = 0;
  const int opened = open_owned(g_path, dev, ino, failed_errno, planted);
  if (opened < 0) {
    g_state.store(kFailed, std::memory_order_release);
    return -1;
  }
  g_dev.store(dev, std::memory_order_relaxed);
  g_ino.store(ino, std::memory_order_relaxed);
  g_fd.store(opened, std::memory_order_release);
  g_state.store(kOpen, std::memory_order_release);
  return opened;
}

void report_failure(int error, const state::Planted& planted) {
  try {
    log::write(config::LogLevel::warn, "events file " + core::log_text::escape(g_path) + ": cannot open (" +
                                           failure_text(error, planted) + "); no attempt log for this process");
  } catch (...) {
    // Out of memory while saying so: the attempt log stays off, and the host must not see it.
  }
}

int destination() {
  const int state = g_state.load(std::memory_order_acquire);
  if (state == kOpen) {
    const int fd = g_fd.load(std::memory_order_acquire);
    if (same_file(fd)) return fd;
  } else if (state != kConfigured) {
    return -1;
  }
  int failed_errno = 0;
  state::Planted planted;
  const int fd = open_file(failed_errno, planted);
  if (failed_errno != 0) report_failure(failed_errno, planted);
  return fd;
}

}  // namespace

void configure(const std::string& file) {
  std::lock_guard lock(open_mutex());
  if (file.empty() || file.size() >= sizeof g_path || file.find('\0') != std::string::npos) {
    g_state.store(kOff, std::memory_order_release);
    return;
  }
  std::memcpy(g_path, file.c_str(), file.size() + 1);
  g_state.store(kConfigured, std::memory_order_release);
}

bool enabled() {
  const int state = g_state.load(std::memory_order_acquire);
  return state == kConfigured || state == kOpen;
}

std::size_t format(const Event& e, long long unix_ms, long pid, std::string_view program, char* out,
                   std::size_t capacity) noexcept {
  if (capacity == 0) return 0;
  // Everything but `path` is bounded here; `path` gets what is left, so a line always fits.
  constexpr std::size_t kSmall = 128;
  constexpr std::size_t kHost = 256;
  constexpr std::size_t kReserve = 64;  // the fields after path, beyond their strings
  Line line(out, capacity - 1);  // room for the newline
  namespace field = core::attempt_log;
  line.key(field::kTime, true);
  put_time(line, unix_ms);
  line.key(field::kPid);
  line.number(pid);
  line.key(field::kProgram);
  line.string(program, kSmall);
  line.key(field::kMethod);
  line.string(e.method, 32);
  line.key(field::kHost);
  line.string(e.host, kHost);
  line.key(field::kPath);
  // numbers, outcome, reason, rule, verdict, fallback
  const std::size_t tail = kReserve + 4 * 24 + 2 * kSmall + kSmall + 32 + kSmall + 16;
  const std::size_t used = line.size() + 2;
  const std::size_t room = capacity - 1 > used + tail ? capacity - 1 - used - tail : 0;
  line.string(e.path, room);
  line.key(field::kAttempt);
  line.number(e.attempt);
  line.key(field::kStatus);
  line.number(e.status);
  line.key(field::kOutcome);
  line.string(e.outcome, kSmall);
  const bool success = !e.retry && (e.success || e.reason == core::Reason::success);
  using core::VerdictKind;
  line.key(field::kVerdict);
  line.raw("\"");
  line.raw(core::to_string(e.retry ? VerdictKind::retry : success ? VerdictKind::success : VerdictKind::give_up));
  line.raw("\"");
  line.key(field::kReason);
  // "status:503" composed here without allocating; no more of it than the field can show is needed
  // (each byte shown takes at least one), plus room for a UTF-8 sequence cut at the bound.
  char reason[kSmall + 8];
  std::size_t length = 0;
  auto append = [&](std::string_view part) {
    const std::size_t n = std::min(part.size(), sizeof reason - length);
    std::memcpy(reason + length, part.data(), n);
    length += n;
  };
  const core::Reason shown = success ? core::Reason::success : e.reason;
  append(core::to_string(shown));
  if (core::has_detail(shown)) {
    append(":");
    append(e.reason_detail);
  }
  line.string(std::string_view(reason, length), kSmall);
  line.key(field::kDelayMs);
  line.number(e.retry ? e.delay_ms : 0);
  line.key(field::kBytes);
  line.number(e.bytes);
  line.key(field::kRule);
  line.string(e.rule, kSmall);
  if (!e.fallback.empty()) {
    line.key(field::kFallback);
    line.string(e.fallback, kSmall);
  }
  line.raw("}");
  if (line.overflowed()) return 0;  // cannot happen with kMaxLine; never write half a line
  std::size_t n = line.size();
  out[n++] = '\n';
  return n;
}

void record(const Event& event) noexcept {
  if (!enabled()) return;
  const int saved_errno = errno;  // the host may look at errno right after a libcurl call
  const int fd = destination();
  if (fd >= 0) {
    const long long unix_ms = wall_ms();
    const char* name = program_invocation_short_name;
    char buffer[kMaxLine];
    const std::size_t n = format(event, unix_ms, static_cast<long>(::getpid()),
                                 name ? std::string_view(name) : std::string_view(), buffer, sizeof buffer);
    // One write: with O_APPEND the kernel places the whole line at the end, atomically with
    // respect to other appenders. A short write (disk full) is not completed: half a line
    // followed by another process's line would be worse than a missing tail.
    while (n > 0 && ::write(fd, buffer, n) < 0 && errno == EINTR) {
    }
  }
  errno = saved_errno;
}

}  // namespace curlretry::shim::events
