#include "core/cooldown.h"

#include <algorithm>
#include <array>
#include <limits>

#include "core/ascii.h"
#include "core/civil_date.h"
#include "core/retry_after.h"

namespace curlretry::core::cooldown {
namespace {

using ascii::is_digit;
using ascii::trim;

Millis clamp(Millis wait) { return std::clamp(wait, Millis{0}, kMaxCooldown); }

// A decimal number with an optional fraction; the cursor
// moves past it. nullopt when no digit is there or the value overflows a day many times over.
std::optional<double> number(std::string_view& s) {
  std::size_t i = 0;
  double value = 0;
  bool any = false;
  while (i < s.size() && is_digit(s[i])) {
    value = value * 10 + (s[i] - '0');
    any = true;
    if (value > 1e12) return std::nullopt;
    ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    double scale = 0.1;
    while (i < s.size() && is_digit(s[i])) {
      value += (s[i] - '0') * scale;
      scale /= 10;
      any = true;
      ++i;
    }
  }
  if (!any) return std::nullopt;
  s.remove_prefix(i);
  return value;
}

std::optional<int> fixed_digits(std::string_view s, std::size_t at, std::size_t count) {
  if (s.size() < at + count) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!is_digit(s[i])) return std::nullopt;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

}  // namespace

bool per_credential(int status) { return status == 429; }

std::optional<Millis> parse_reset_duration(std::string_view value) {
  std::string_view s = trim(value);
  if (s.empty()) return std::nullopt;
  double total = 0;
  while (!s.empty()) {
    auto n = number(s);
    if (!n) return std::nullopt;
    double unit;
    if (s.substr(0, 2) == "ms") {
      unit = 1;
      s.remove_prefix(2);
    } else if (!s.empty() && s[0] == 'h') {
      unit = 3600e3;
      s.remove_prefix(1);
    } else if (!s.empty() && s[0] == 'm') {
      unit = 60e3;
      s.remove_prefix(1);
    } else if (!s.empty() && s[0] == 's') {
      unit = 1e3;
      s.remove_prefix(1);
    } else {
      return std::nullopt;  // a bare number has no unit we could trust
    }
    total += *n * unit;
    if (total > 1e15) return std::nullopt;
  }
  return Millis{static_cast<Millis::rep>(total + 0.5)};
}

std::optional<std::chrono::sys_time<Millis>> parse_rfc3339(std::string_view value) {
  std::string_view s = trim(value);
  auto year = fixed_digits(s, 0, 4);
  auto month = fixed_digits(s, 5, 2);
  auto day = fixed_digits(s, 8, 2);
  auto hour = fixed_digits(s, 11, 2);
  auto minute = fixed_digits(s, 14, 2);
  auto second = fixed_digits(s, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60)
    return std::nullopt;
  std::size_t i = 19;
  Millis::rep ms = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    while (i < s.size() && is_digit(s[i])) {
      if (digits < 3) ms = ms * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    if (digits == 0) return std::nullopt;
    for (int d = digits; d < 3; ++d) ms *= 10;
  }
  Millis::rep offset_min = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    auto oh = fixed_digits(s, i + 1, 2);
    auto om = fixed_digits(s, i + 4, 2);
    if (!oh || !om || s[i + 3] != ':' || *oh > 23 || *om > 59) return std::nullopt;
    offset_min = (*oh * 60 + *om) * (s[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return std::nullopt;  // RFC 3339 requires a zone
  }
  if (i != s.size()) return std::nullopt;
  const std::int64_t days = days_from_civil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
  const std::int64_t secs = days * 86400 + *hour * 3600 + *minute * 60 + *second - offset_min * 60;
  return std::chrono::sys_time<Millis>{Millis{secs * 1000 + ms}};
}

std::optional<Millis> wait_of(const Signal& signal, std::chrono::system_clock::time_point now) {
  if (!cools_fleet(signal.status)) return std::nullopt;
  const ResponseHints& h = signal.hints;
  if (h.retry_after_ms) {
    if (auto ms = parse_retry_after_ms(*h.retry_after_ms)) return clamp(*ms);
  }
  if (h.retry_after) {
    if (auto wait = parse_retry_after(*h.retry_after, now)) return clamp(*wait);
  }
  if (h.retry_after || h.retry_after_ms) return std::nullopt;
  std::optional<Millis> reset;
  if (h.requests_reset) {
    if (auto at = parse_rfc3339(*h.requests_reset)) {
      const auto now_ms = std::chrono::time_point_cast<Millis>(now);
      reset = std::max(Millis{0}, *at - now_ms);
    }
  }
  if (h.reset_requests) {
    if (auto d = parse_reset_duration(*h.reset_requests)) reset = reset ? std::max(*reset, *d) : *d;
  }
  if (reset) return clamp(*reset);
  return std::nullopt;
}

Millis remaining(std::int64_t until_ms, std::int64_t now_ms) {
  return until_ms > now_ms ? clamp(Millis{until_ms - now_ms}) : Millis{0};
}

Millis combine(Millis planned, Millis cooling) { return std::max(planned, cooling); }

bool fits(Millis wait, Millis max_server_wait, std::optional<Millis> time_left) {
  if (wait > max_server_wait) return false;
  return !time_left || wait < *time_left;
}

}  // namespace curlretry::core::cooldown
