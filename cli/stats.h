// `curlretry stats FILE...`: reads attempt logs (CURLRETRY_EVENTS, one JSON object per line, see
// shim/events.h) and prints what curlretry did: per-host totals, retry and give-up reasons, a
// chart of attempts over time and a histogram of retry delays. Plain text, deterministic (UTC),
// so it can be pasted into an issue or compared in a test.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/reason.h"

namespace curlretry::cli {

struct StatsOptions {
  std::vector<std::string> files;  // "-" = stdin
  long long bucket_seconds = 0;    // rows of the time chart; 0 = chosen from the span (<= 24 rows)
  int width = 50;                  // widest bar, in characters
  std::optional<long long> since_ms;  // only attempts at or after this Unix time (ms)
  std::optional<long long> until_ms;  // only attempts before this Unix time (ms)
  bool processes = false;             // a table per process (pid, program) too
  bool json = false;                  // one JSON object instead of the report
};

// One line of an attempt log: the fields stats uses.
struct AttemptRecord {
  long long time_ms = 0;  // Unix time, milliseconds
  long long pid = 0;
  std::string program;
  std::string host;
  int attempt = 1;
  int status = 0;
  core::VerdictKind verdict = core::VerdictKind::give_up;
  std::string reason;  // as written: "status:503", "exhausted" (core::parse_reason reads it)
  long long delay_ms = 0;
};

// nullopt for a line that is not an attempt record (not JSON, or missing time/host/attempt/
// verdict).
std::optional<AttemptRecord> parse_record(std::string_view line);

// "2025-06-01T12:00:00.123Z" (fraction optional) -> Unix milliseconds.
std::optional<long long> parse_utc_time(std::string_view text);

// "90s", "5m", "1h", "1d" or plain seconds -> seconds; nullopt when malformed or not positive.
std::optional<long long> parse_bucket(std::string_view text);

// --since/--until: "2025-06-01T12:00:00Z" (fraction optional), "2025-06-01" (midnight UTC), or a
// duration ago ("90m", "2h", "1d") from `now_ms` -> Unix milliseconds.
std::optional<long long> parse_time_bound(std::string_view text, long long now_ms);

// --json: {"attempts","requests","processes","from","to","hosts":{HOST:TOTALS},"all":TOTALS,
// "reasons":{"retry":{REASON:N},"gave_up":{...},"failed":{...}},"by_process":[{"pid","program",
// ...TOTALS}]} where TOTALS = {"requests","ok","first_try","saved","gave_up","failed","retries",
// "waited_ms"}.
std::string render_stats_json(std::vector<AttemptRecord> records);

// The whole report for these records (any order; sorted by time inside).
std::string render_stats(std::vector<AttemptRecord> records, const StatsOptions& options);

int run_stats(const StatsOptions& options);

}  // namespace curlretry::cli
