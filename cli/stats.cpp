#include "cli/stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "cli/json.h"
#include "core/ascii.h"
#include "core/attempt_log.h"
#include "core/civil_date.h"
#include "core/count_text.h"
#include "core/json_object.h"

namespace curlretry::cli {
namespace {

// --- calendar -----------------------------------------------------------------------------------

struct Civil {
  long long year;
  int month, day, hour, minute, second;
};

Civil civil_from_ms(long long ms) {
  long long secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  long long days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
  const long long sod = secs - days * 86400;
  const core::CivilDate date = core::civil_from_days(days);
  return Civil{date.year, static_cast<int>(date.month), static_cast<int>(date.day), static_cast<int>(sod / 3600),
               static_cast<int>(sod / 60 % 60), static_cast<int>(sod % 60)};
}

std::string two(int v) { return {static_cast<char>('0' + v / 10 % 10), static_cast<char>('0' + v % 10)}; }

std::string date_text(const Civil& c) {
  return std::to_string(c.year) + "-" + two(c.month) + "-" + two(c.day);
}
std::string clock_text(const Civil& c, bool seconds) {
  return two(c.hour) + ":" + two(c.minute) + (seconds ? ":" + two(c.second) : "");
}

// --- numbers as people read them ------------------------------------------------------------------

std::string duration_text(long long ms) {
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms < 60000) {
    const long long tenths = (ms + 50) / 100;
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " s";
  }
  const long long s = (ms + 500) / 1000;
  if (s < 3600) return std::to_string(s / 60) + "m" + two(static_cast<int>(s % 60)) + "s";
  return std::to_string(s / 3600) + "h" + two(static_cast<int>(s / 60 % 60)) + "m";
}

std::string pad_right(std::string s, std::size_t w) {
  std::size_t chars = 0;
  for (const char c : s) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  if (chars < w) s.append(w - chars, ' ');
  return s;
}
std::string pad_left(const std::string& s, std::size_t w) {
  return s.size() < w ? std::string(w - s.size(), ' ') + s : s;
}

// --- what each attempt counts as -----------------------------------------------------------------

// Reasons that mean "curlretry would have retried, but a limit said stop".
bool is_limit_reason(std::string_view text) {
  const auto parsed = core::parse_reason(text);
  if (!parsed) return false;
  switch (parsed->reason) {
    case core::Reason::exhausted:
    case core::Reason::max_elapsed:
    case core::Reason::deadline:
    case core::Reason::retry_after_too_long:
    case core::Reason::not_replayable:
    case core::Reason::budget:
    case core::Reason::cooldown: return true;
    default: return false;
  }
}

enum class Kind { ok, retry, gave_up, failed };

Kind kind_of(const AttemptRecord& r) {
  if (r.verdict == core::VerdictKind::retry) return Kind::retry;
  if (r.verdict == core::VerdictKind::success) return Kind::ok;
  return r.attempt > 1 || is_limit_reason(r.reason) ? Kind::gave_up : Kind::failed;
}

constexpr char kMark[] = {'o', 'r', 'x', '-'};

// `ok` counts every success; `first_try` and `saved` (by a retry) split it.
struct Totals {
  long long requests = 0, ok = 0, first_try = 0, saved = 0, gave_up = 0, failed = 0, retries = 0, waited_ms = 0;

  void add(const AttemptRecord& r) {
    if (r.attempt == 1) ++requests;
    switch (kind_of(r)) {
      case Kind::retry:
        ++retries;
        waited_ms += std::max(0LL, r.delay_ms);
        break;
      case Kind::ok:
        ++ok;
        ++(r.attempt > 1 ? saved : first_try);
        break;
      case Kind::gave_up: ++gave_up; break;
      case Kind::failed: ++failed; break;
    }
  }
};

template <typename Key>
std::string table(const std::map<Key, Totals>& rows, const std::vector<std::string>& key_columns,
                  const std::function<std::vector<std::string>(const Key&)>& key_text, const Totals* all) {
  std::vector<std::size_t> key_width;
  for (const auto& c : key_columns) key_width.push_back(c.size());
  for (const auto& [key, _] : rows) {
    const auto texts = key_text(key);
    for (std::size_t i = 0; i < texts.size(); ++i) key_width[i] = std::max(key_width[i], texts[i].size());
  }
  const std::vector<std::string> columns = {"requests", "ok", "first-try", "saved", "gave up", "failed", "retries",
                                            "waited"};
  std::string out;
  for (std::size_t i = 0; i < key_columns.size(); ++i) out += (i ? "  " : "") + pad_right(key_columns[i], key_width[i]);
  for (const auto& c : columns) out += "  " + c;
  out += '\n';
  auto row = [&](const std::vector<std::string>& keys, const Totals& t) {
    const std::vector<std::string> values = {std::to_string(t.requests), std::to_string(t.ok),
                                             std::to_string(t.first_try), std::to_string(t.saved),
                                             std::to_string(t.gave_up),  std::to_string(t.failed),
                                             std::to_string(t.retries),  duration_text(t.waited_ms)};
    std::string line;
    for (std::size_t i = 0; i < keys.size(); ++i) line += (i ? "  " : "") + pad_right(keys[i], key_width[i]);
    for (std::size_t i = 0; i < columns.size(); ++i) line += "  " + pad_left(values[i], columns[i].size());
    out += line + '\n';
  };
  for (const auto& [key, t] : rows) row(key_text(key), t);
  if (all != nullptr && rows.size() > 1) {
    std::vector<std::string> keys(key_columns.size());
    keys[0] = "all";
    row(keys, *all);
  }
  return out;
}

std::string totals_table(const std::vector<AttemptRecord>& records) {
  std::map<std::string, Totals> by_host;
  Totals all;
  for (const auto& r : records) {
    by_host[r.host].add(r);
    all.add(r);
  }
  return table<std::string>(by_host, {"host"}, [](const std::string& host) { return std::vector{host}; }, &all);
}

using ProcessKey = std::pair<long long, std::string>;  // pid, program

std::map<ProcessKey, Totals> by_process(const std::vector<AttemptRecord>& records) {
  std::map<ProcessKey, Totals> out;
  for (const auto& r : records) out[{r.pid, r.program}].add(r);
  return out;
}

std::string process_table(const std::vector<AttemptRecord>& records) {
  return table<ProcessKey>(by_process(records), {"pid", "program"}, [](const ProcessKey& k) {
    return std::vector{std::to_string(k.first), k.second.empty() ? std::string("?") : k.second};
  }, nullptr);
}

// What each way of ending without a retry means, for the legend under the reasons.
std::string reason_meaning(const std::string& text) {
  const auto parsed = core::parse_reason(text);
  if (!parsed) return "";
  switch (parsed->reason) {
    case core::Reason::exhausted: return "every attempt max_attempts allows was used";
    case core::Reason::max_elapsed: return "max_elapsed_ms would have passed during the next wait";
    case core::Reason::deadline: return "the program's own timeout would have passed during the next wait";
    case core::Reason::retry_after_too_long: return "the server asked to wait longer than retry_after.max_ms";
    case core::Reason::not_replayable: return "the upload could not be sent again";
    case core::Reason::not_retryable: return "a status or error curlretry does not retry";
    case core::Reason::committed: return "the body had already reached the program";
    case core::Reason::host_abort: return "the program aborted the transfer itself";
    case core::Reason::bad_argument: return "libcurl refused the program's request as given";
    case core::Reason::disabled: return "curlretry was disabled";
    case core::Reason::should_retry_false: return "the server said x-should-retry: false";
    case core::Reason::permanent_code: return "a JSON error code listed as permanent (codes.permanent)";
    case core::Reason::permanent: return "a permanent-failure marker in the body (never_retry.body_markers)";
    default: return "";
  }
}

std::string reasons_section(const std::vector<AttemptRecord>& records) {
  std::map<Kind, std::map<std::string, long long>> counts;
  for (const auto& r : records) {
    const Kind k = kind_of(r);
    if (k != Kind::ok) ++counts[k][r.reason.empty() ? "?" : r.reason];
  }
  std::string out;
  const std::pair<Kind, const char*> lines[] = {
      {Kind::retry, "retried because"}, {Kind::gave_up, "gave up because"}, {Kind::failed, "failed because"}};
  for (const auto& [kind, label] : lines) {
    const auto found = counts.find(kind);
    if (found == counts.end()) continue;
    std::vector<std::pair<std::string, long long>> sorted(found->second.begin(), found->second.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string line = pad_right(std::string(label) + ":", 17);
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      line += (i ? ", " : "") + sorted[i].first + " (" + std::to_string(sorted[i].second) + ")";
    }
    out += line + '\n';
  }
  // A legend for the reasons of the two kinds that end a request without the answer.
  std::set<std::string> ended;
  for (const Kind kind : {Kind::gave_up, Kind::failed}) {
    const auto found = counts.find(kind);
    if (found == counts.end()) continue;
    for (const auto& [reason, _] : found->second) ended.insert(reason);
  }
  std::size_t width = 0;
  for (const auto& reason : ended) width = std::max(width, reason.size());
  for (const auto& reason : ended) {
    const std::string meaning = reason_meaning(reason);
    if (!meaning.empty()) out += "  " + pad_right(reason, width) + "  " + meaning + '\n';
  }
  return out;
}

long long floor_div(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

long long choose_bucket(long long first_ms, long long last_ms) {
  static constexpr long long kSteps[] = {1,    2,    5,    10,    15,    30,    60,    120,   300,   600,
                                         900,  1800, 3600, 7200, 10800, 21600, 43200, 86400, 604800};
  for (const long long step : kSteps) {
    const long long rows = floor_div(last_ms, step * 1000) - floor_div(first_ms, step * 1000) + 1;
    if (rows <= 24) return step;
  }
  return 604800;
}

std::string bucket_text(long long seconds) {
  if (seconds % 86400 == 0) return core::counted(seconds / 86400, "day", "days");
  if (seconds % 3600 == 0) return core::counted(seconds / 3600, "hour", "hours");
  if (seconds % 60 == 0) return core::counted(seconds / 60, "min", "min");
  return core::counted(seconds, "s", "s");
}

std::string time_chart(const std::vector<AttemptRecord>& records, const StatsOptions& options) {
  const long long first = records.front().time_ms;
  const long long last = records.back().time_ms;
  const long long bucket = options.bucket_seconds > 0 ? options.bucket_seconds : choose_bucket(first, last);
  const long long step = bucket * 1000;
  const long long first_row = floor_div(first, step);
  const long long rows = floor_div(last, step) - first_row + 1;
  constexpr long long kMaxRows = 1000;
  std::vector<std::array<long long, 4>> counts(static_cast<std::size_t>(std::min(rows, kMaxRows)), {0, 0, 0, 0});
  for (const auto& r : records) {
    const long long row = floor_div(r.time_ms, step) - first_row;
    if (row < kMaxRows) ++counts[static_cast<std::size_t>(row)][static_cast<int>(kind_of(r))];
  }
  long long widest = 0;
  for (const auto& c : counts) widest = std::max(widest, c[0] + c[1] + c[2] + c[3]);
  const long long width = std::max(options.width, 10);
  const long long per_mark = std::max(1LL, (widest + width - 1) / width);
  const bool multi_day = civil_from_ms(first).day != civil_from_ms(last).day ||
                         civil_from_ms(first).month != civil_from_ms(last).month ||
                         civil_from_ms(first).year != civil_from_ms(last).year;
  std::string out = "attempts over time (UTC, " + bucket_text(bucket) + " per row; o ok, r retry, x gave up, - failed";
  out += per_mark > 1 ? "; one mark = up to " + std::to_string(per_mark) + " attempts)\n" : ")\n";
  std::vector<std::string> bars;
  std::size_t bar_width = 0;
  for (const auto& c : counts) {
    std::string bar;
    for (int k = 0; k < 4; ++k) bar.append(static_cast<std::size_t>((c[k] + per_mark - 1) / per_mark), kMark[k]);
    bar_width = std::max(bar_width, bar.size());
    bars.push_back(std::move(bar));
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const Civil at = civil_from_ms((first_row + static_cast<long long>(i)) * step);
    std::string label = clock_text(at, bucket < 60);
    if (multi_day || bucket >= 86400) label = two(at.month) + "-" + two(at.day) + " " + label;
    const auto& c = counts[i];
    std::string line = "  " + label + "  " + pad_right(bars[i], bar_width) + "  " +
                       std::to_string(c[0] + c[1] + c[2] + c[3]);
    out += std::string(core::ascii::strip_trailing(line, " ")) + '\n';
  }
  if (rows > kMaxRows) out += "  ... " + std::to_string(rows - kMaxRows) + " more rows (use --bucket)\n";
  return out;
}

std::string delay_histogram(const std::vector<AttemptRecord>& records, const StatsOptions& options) {
  std::vector<long long> delays;
  for (const auto& r : records) {
    if (kind_of(r) == Kind::retry) delays.push_back(std::max(0LL, r.delay_ms));
  }
  if (delays.empty()) return "retry delays: none (no retries)\n";
  std::sort(delays.begin(), delays.end());
  static constexpr long long kEdges[] = {0, 100, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000};
  static constexpr const char* kLabels[] = {"< 100 ms", "100-499 ms", "0.5-1 s",  "1-2 s",   "2-5 s",
                                            "5-10 s",   "10-30 s",    "30-60 s",  "1-2 min", ">= 2 min"};
  constexpr int kBins = 10;
  std::array<long long, kBins> bins{};
  for (const long long d : delays) {
    int b = kBins - 1;
    while (b > 0 && d < kEdges[b]) --b;
    ++bins[static_cast<std::size_t>(b)];
  }
  int lo = 0, hi = kBins - 1;
  while (bins[static_cast<std::size_t>(lo)] == 0) ++lo;
  while (bins[static_cast<std::size_t>(hi)] == 0) --hi;
  const long long widest = *std::max_element(bins.begin(), bins.end());
  const long long width = std::max(options.width, 10);
  const long long per_mark = std::max(1LL, (widest + width - 1) / width);
  std::string out = "retry delays (" + core::counted(static_cast<long long>(delays.size()), "retry", "retries") +
                    "; median " + duration_text(delays[(delays.size() - 1) / 2]) + ", max " +
                    duration_text(delays.back());
  out += per_mark > 1 ? "; one # = up to " + std::to_string(per_mark) + " retries)\n" : ")\n";
  const std::size_t bar_width = static_cast<std::size_t>((widest + per_mark - 1) / per_mark);
  for (int b = lo; b <= hi; ++b) {
    const long long n = bins[static_cast<std::size_t>(b)];
    std::string line = "  " + pad_right(kLabels[b], 10) + "  " +
                       pad_right(std::string(static_cast<std::size_t>((n + per_mark - 1) / per_mark), '#'), bar_width) +
                       "  " + std::to_string(n);
    out += line + '\n';
  }
  return out;
}

std::string header(const std::vector<AttemptRecord>& records) {
  std::set<std::pair<long long, std::string>> processes;
  long long requests = 0;
  for (const auto& r : records) {
    processes.emplace(r.pid, r.program);
    requests += r.attempt == 1;
  }
  const Civil a = civil_from_ms(records.front().time_ms);
  const Civil b = civil_from_ms(records.back().time_ms);
  std::string out = core::counted(static_cast<long long>(records.size()), "attempt", "attempts") + " in " +
                    core::counted(requests, "request", "requests") + " by " +
                    core::counted(static_cast<long long>(processes.size()), "process", "processes") + ", " + date_text(a) +
                    " " + clock_text(a, true) + " to ";
  if (date_text(a) != date_text(b)) out += date_text(b) + " ";
  out += clock_text(b, true) + " UTC (" + duration_text(records.back().time_ms - records.front().time_ms) + ")\n";
  return out;
}

}  // namespace

std::optional<long long> parse_utc_time(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.fff...]Z
  auto digits = [&](std::size_t at, std::size_t n, long long& v) {
    if (at + n > t.size()) return false;
    v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      v = v * 10 + (t[i] - '0');
    }
    return true;
  };
  long long y, mo, d, h, mi, s;
  if (!digits(0, 4, y) || t.size() < 20 || t[4] != '-' || !digits(5, 2, mo) || t[7] != '-' || !digits(8, 2, d) ||
      (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !digits(11, 2, h) || t[13] != ':' || !digits(14, 2, mi) ||
      t[16] != ':' || !digits(17, 2, s)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  std::size_t i = 19;
  long long ms = 0;
  if (i < t.size() && t[i] == '.') {
    ++i;
    int n = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (n < 3) ms = ms * 10 + (t[i] - '0');
      ++n;
      ++i;
    }
    if (n == 0) return std::nullopt;
    for (; n < 3; ++n) ms *= 10;
  }
  if (i + 1 != t.size() || (t[i] != 'Z' && t[i] != 'z')) return std::nullopt;
  const long long days = core::days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + ms;
}

std::optional<long long> parse_bucket(std::string_view text) {
  if (text.empty()) return std::nullopt;
  long long unit = 1;
  switch (text.back()) {
    case 's': unit = 1; text.remove_suffix(1); break;
    case 'm': unit = 60; text.remove_suffix(1); break;
    case 'h': unit = 3600; text.remove_suffix(1); break;
    case 'd': unit = 86400; text.remove_suffix(1); break;
    default: break;
  }
  if (text.empty() || text.size() > 9) return std::nullopt;
  long long v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v <= 0) return std::nullopt;
  return v * unit;
}

std::optional<AttemptRecord> parse_record(std::string_view line) {
  namespace field = core::attempt_log;
  const auto object = core::json::read_object(line);
  if (!object) return std::nullopt;
  auto text = [&](std::string_view key) { return core::json::string_member(*object, key); };
  auto number = [&](std::string_view key) { return core::json::number_member(*object, key); };
  const std::string* time = text(field::kTime);
  const std::string* host = text(field::kHost);
  const std::string* verdict = text(field::kVerdict);
  const auto attempt = number(field::kAttempt);
  if (!time || !host || !verdict || !attempt) return std::nullopt;
  const auto kind = core::verdict_kind_from_string(*verdict);
  if (!kind) return std::nullopt;
  const auto when = parse_utc_time(*time);
  if (!when || *attempt < 1 || *attempt > 1e9) return std::nullopt;
  AttemptRecord r;
  r.time_ms = *when;
  r.host = *host;
  r.verdict = *kind;
  r.attempt = static_cast<int>(*attempt);
  if (const auto v = number(field::kPid)) r.pid = static_cast<long long>(*v);
  if (const auto* v = text(field::kProgram)) r.program = *v;
  if (const auto v = number(field::kStatus)) r.status = static_cast<int>(*v);
  if (const auto* v = text(field::kReason)) r.reason = *v;
  if (const auto v = number(field::kDelayMs); v && *v >= 0 && *v < 1e15) r.delay_ms = static_cast<long long>(*v);
  return r;
}

std::optional<long long> parse_time_bound(std::string_view text, long long now_ms) {
  if (text.size() == 10) return parse_utc_time(std::string(text) + "T00:00:00Z");
  if (auto at = parse_utc_time(text)) return at;
  if (auto ago = parse_bucket(text)) return now_ms - *ago * 1000;
  return std::nullopt;
}

namespace {

std::string json_totals(const Totals& t) {
  return "{\"requests\":" + std::to_string(t.requests) + ",\"ok\":" + std::to_string(t.ok) +
         ",\"first_try\":" + std::to_string(t.first_try) + ",\"saved\":" + std::to_string(t.saved) +
         ",\"gave_up\":" + std::to_string(t.gave_up) + ",\"failed\":" + std::to_string(t.failed) +
         ",\"retries\":" + std::to_string(t.retries) + ",\"waited_ms\":" + std::to_string(t.waited_ms) + "}";
}

std::string json_time(long long ms) {
  const Civil c = civil_from_ms(ms);
  const long long fraction = ((ms % 1000) + 1000) % 1000;
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03lld", fraction);
  return "\"" + date_text(c) + "T" + clock_text(c, true) + millis + "Z\"";
}

void sort_by_time(std::vector<AttemptRecord>& records) {
  std::stable_sort(records.begin(), records.end(),
                   [](const AttemptRecord& a, const AttemptRecord& b) { return a.time_ms < b.time_ms; });
}

}  // namespace

std::string render_stats_json(std::vector<AttemptRecord> records) {
  sort_by_time(records);
  std::map<std::string, Totals> hosts;
  Totals all;
  std::map<Kind, std::map<std::string, long long>> reasons;
  long long requests = 0;
  for (const auto& r : records) {
    hosts[r.host].add(r);
    all.add(r);
    requests += r.attempt == 1;
    const Kind k = kind_of(r);
    if (k != Kind::ok) ++reasons[k][r.reason.empty() ? "?" : r.reason];
  }
  const auto processes = by_process(records);
  std::string out = "{\"attempts\":" + std::to_string(records.size()) + ",\"requests\":" + std::to_string(requests) +
                    ",\"processes\":" + std::to_string(processes.size());
  out += ",\"from\":" + (records.empty() ? std::string("null") : json_time(records.front().time_ms));
  out += ",\"to\":" + (records.empty() ? std::string("null") : json_time(records.back().time_ms));
  out += ",\"hosts\":{";
  bool first = true;
  for (const auto& [host, t] : hosts) {
    out += (first ? "" : ",") + json_quote(host) + ":" + json_totals(t);
    first = false;
  }
  out += "},\"all\":" + json_totals(all) + ",\"reasons\":{";
  const std::pair<Kind, const char*> kinds[] = {{Kind::retry, "retry"}, {Kind::gave_up, "gave_up"},
                                                {Kind::failed, "failed"}};
  for (std::size_t i = 0; i < 3; ++i) {
    out += std::string(i ? "," : "") + "\"" + kinds[i].second + "\":{";
    bool first_reason = true;
    for (const auto& [reason, n] : reasons[kinds[i].first]) {
      out += (first_reason ? "" : ",") + json_quote(reason) + ":" + std::to_string(n);
      first_reason = false;
    }
    out += "}";
  }
  out += "},\"by_process\":[";
  first = true;
  for (const auto& [key, t] : processes) {
    std::string totals = json_totals(t);
    out += (first ? "" : ",") + std::string("{\"pid\":") + std::to_string(key.first) +
           ",\"program\":" + json_quote(key.second) + "," + totals.substr(1);
    first = false;
  }
  return out + "]}\n";
}

std::string render_stats(std::vector<AttemptRecord> records, const StatsOptions& options) {
  if (records.empty()) return "no attempts\n";
  sort_by_time(records);
  std::string out = header(records);
  out += '\n';
  out += totals_table(records);
  if (options.processes) out += "\nby process:\n" + process_table(records);
  const std::string reasons = reasons_section(records);
  if (!reasons.empty()) out += '\n' + reasons;
  out += '\n' + time_chart(records, options);
  out += '\n' + delay_histogram(records, options);
  return out;
}

int run_stats(const StatsOptions& options) {
  std::vector<AttemptRecord> records;
  long long skipped = 0;
  std::string first_skipped;
  for (const auto& file : options.files) {
    std::ifstream in;
    std::istream* stream = &std::cin;
    if (file != "-") {
      in.open(file, std::ios::binary);
      if (!in) {
        std::cerr << "curlretry stats: " << file << ": cannot open\n";
        return 1;
      }
      stream = &in;
    }
    std::string line;
    long long number = 0;
    while (std::getline(*stream, line)) {
      ++number;
      if (core::ascii::trim(line).empty()) continue;
      if (auto r = parse_record(line)) {
        if (options.since_ms && r->time_ms < *options.since_ms) continue;
        if (options.until_ms && r->time_ms >= *options.until_ms) continue;
        records.push_back(std::move(*r));
      } else {
        if (skipped++ == 0) first_skipped = file + ":" + std::to_string(number);
      }
    }
    if (stream->bad()) {
      std::cerr << "curlretry stats: " << file << ": read error\n";
      return 1;
    }
  }
  if (skipped > 0) {
    std::cerr << "curlretry stats: skipped " << core::counted(skipped, "line", "lines")
              << (skipped == 1 ? " that is not an attempt record" : " that are not attempt records")
              << " (first: " << first_skipped << ")\n";
  }
  if (records.empty() && (options.since_ms || options.until_ms)) {
    if (options.json) {
      std::cout << render_stats_json({});
    } else {
      std::cout << "no attempts in that time\n";
    }
    return std::cout.good() ? 0 : 1;
  }
  if (records.empty()) {
    std::cerr << "curlretry stats: no attempt records (write some with CURLRETRY_EVENTS=FILE)\n";
    return 1;
  }
  std::cout << (options.json ? render_stats_json(std::move(records)) : render_stats(std::move(records), options));
  return std::cout.good() ? 0 : 1;
}

}  // namespace curlretry::cli
