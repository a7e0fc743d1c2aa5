// The attempt log: with CURLRETRY_EVENTS=FILE (settings.events_file), one JSON line per attempt
// of every transfer the shim handles, appended to FILE. Many processes may share one file: each
// line is one write(2) on an O_APPEND|O_CLOEXEC descriptor, so lines never interleave.
//
// A line, fields always in this order (`curlretry stats` and the man page rely on them):
//
//   {"time":"2025-06-01T12:00:00.123Z","pid":4242,"program":"curl","method":"POST",
//    "host":"api.z.ai","path":"/api/paas/v4/chat/completions","attempt":1,"status":429,
//    "outcome":"HTTP 429 code 1302","verdict":"retry","reason":"code:1302","delay_ms":1500,
//    "bytes":57,"rule":"zai"}
//
//   time      UTC wall clock when the attempt ended, millisecond precision
//   program   the process's short name (argv[0] without directories)
//   host      lower case, no port, no userinfo; path: no query, no fragment
//   status    the attempt's HTTP status, 0 when no response arrived
//   outcome   what happened, as in the log line ("HTTP 503", "connection reset")
//   verdict   "retry", "success" (a complete 2xx/3xx, the transfer is done) or "give_up" (the
//             transfer is done and the host gets this attempt's result; `reason` says why)
//   reason    the core's machine reason ("status:503", "exhausted", "not-retryable", ...);
//             "success" for a success (the core says "committed" once the body has streamed)
//   delay_ms  the wait before the next attempt (0 unless verdict is "retry")
//   bytes     body bytes received in this attempt
//   fallback  only after the transfer switched to its rule's fallback: "model NAME", "url HOST/PATH"
//
// Strings are cut (at a UTF-8 boundary) so that a line never exceeds kMaxLine bytes; invalid
// UTF-8 becomes U+FFFD. Nothing here allocates, throws or blocks beyond the write itself, and a
// file that cannot be opened turns the log off for the process (said once on the log).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/reason.h"

namespace curlretry::shim::events {

constexpr std::size_t kMaxLine = 4096;  // below PIPE_BUF too, so a FIFO reader sees whole lines

struct Event {
  std::string_view method;   // "GET"
  std::string_view host;     // UrlParts::host
  std::string_view path;     // UrlParts::path (already without query)
  int attempt = 1;           // 1-based
  int status = 0;            // HTTP status of this attempt, 0 = none
  std::string_view outcome;  // core::Verdict::what
  bool retry = false;        // core::Verdict::action == retry
  bool success = false;      // a complete 2xx/3xx arrived (CURLE_OK): verdict "success"
  core::Reason reason = core::Reason::not_retryable;  // core::Verdict::reason ("success" when `success`)
  std::string_view reason_detail;                     // core::Verdict::reason_detail
  long long delay_ms = 0;    // core::Verdict::delay when retrying
  long long bytes = 0;       // body bytes of this attempt (CURLINFO_SIZE_DOWNLOAD_T)
  std::string_view rule;     // matched rule name, or "defaults"
  std::string_view fallback; // what the transfer switched to ("model claude-y"); empty = not switched
};

// Where to write; empty = no attempt log. Called once with the runtime settings; the file is
// opened on the first record(), never here.
void configure(const std::string& file);

// Whether record() would write anything (lets callers skip gathering fields).
bool enabled();

// Appends one line. Never throws; errors are swallowed.
void record(const Event& event) noexcept;

// Formats `event` as its line (with the trailing newline) into `out`, as record() does with the
// given time, pid and program. Returns the length (<= kMaxLine). Exposed for tests.
std::size_t format(const Event& event, long long unix_ms, long pid, std::string_view program, char* out,
                   std::size_t capacity) noexcept;

}  // namespace curlretry::shim::events
