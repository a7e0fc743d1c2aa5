// Retry-After and retry-after-ms. Dates are parsed by hand (no strptime/timegm): those depend on
// the host's locale and TZ, and the shim runs inside processes whose settings we do not own.
#include "core/retry_after.h"

#include "core/ascii.h"
#include "core/civil_date.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>

namespace curlretry::core {
namespace {

using Rep = Millis::rep;
constexpr Rep kRepMax = std::numeric_limits<Rep>::max();

constexpr std::array<std::string_view, 7> kShortDays{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 7> kLongDays{"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                   "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

using ascii::is_digit;
using ascii::only_digits;
using ascii::trim;

// Digits only (no sign, no space: from_chars alone would accept a leading '-').
std::optional<Rep> parse_digits(std::string_view s) {
  if (s.empty() || !only_digits(s)) return std::nullopt;
  Rep value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// The year only: all the two-digit-year rule needs.
std::int64_t year_from_days(std::int64_t days) { return civil_from_days(days).year; }

bool is_leap(std::int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

unsigned days_in_month(std::int64_t y, unsigned m) {
  constexpr std::array<unsigned, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// A forward-only reader over the fixed-layout date forms.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : rest_(s) {}

  bool done() const { return rest_.empty(); }

  bool literal(std::string_view text) {
    if (rest_.substr(0, text.size()) != text) return false;
    rest_.remove_prefix(text.size());
    return true;
  }

  // Exactly `count` ASCII digits.
  std::optional<int> digits(std::size_t count) {
    if (rest_.size() < count) return std::nullopt;
    int value = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (!is_digit(rest_[i])) return std::nullopt;
      value = value * 10 + (rest_[i] - '0');
    }
    rest_.remove_prefix(count);
    return value;
  }

  // The index of the name that starts here, compared ASCII-case-insensitively (the grammar is
  // case-sensitive, but nothing is gained by rejecting "NOV").
  template <std::size_t N>
  std::optional<int> name(const std::array<std::string_view, N>& names) {
    for (std::size_t i = 0; i < N; ++i) {
      const std::string_view candidate = names[i];
      if (ascii::istarts_with(rest_, candidate)) {
        rest_.remove_prefix(candidate.size());
        return static_cast<int>(i);
      }
    }
    return std::nullopt;
  }

 private:
  std::string_view rest_;
};

struct Fields {
  std::int64_t year = 0;
  int month = 0;  // 1..12
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
};

bool time_of_day(Cursor& c, Fields& f) {
  const auto h = c.digits(2);
  if (!h || !c.literal(":")) return false;
  const auto m = c.digits(2);
  if (!m || !c.literal(":")) return false;
  const auto s = c.digits(2);
  if (!s) return false;
  f.hour = *h;
  f.minute = *m;
  f.second = *s;
  return true;
}

bool month(Cursor& c, Fields& f) {
  const auto m = c.name(kMonths);
  if (!m) return false;
  f.month = *m + 1;
  return true;
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::optional<Fields> imf_fixdate(std::string_view s) {
  Cursor c(s);
  Fields f;
  if (!c.name(kShortDays) || !c.literal(", ")) return std::nullopt;
  const auto day = c.digits(2);
  if (!day || !c.literal(" ") || !month(c, f) || !c.literal(" ")) return std::nullopt;
  const auto year = c.digits(4);
  if (!year || !c.literal(" ") || !time_of_day(c, f) || !c.literal(" GMT") || !c.done()) return std::nullopt;
  f.day = *day;
  f.year = *year;
  return f;
}

// "Sunday, 06-Nov-94 08:49:37 GMT"; the year is resolved by the caller.
std::optional<Fields> rfc850_date(std::string_view s) {
  Cursor c(s);
  Fields f;
  if (!c.name(kLongDays) || !c.literal(", ")) return std::nullopt;
  const auto day = c.digits(2);
  if (!day || !c.literal("-") || !month(c, f) || !c.literal("-")) return std::nullopt;
  const auto year = c.digits(2);
  if (!year || !c.literal(" ") || !time_of_day(c, f) || !c.literal(" GMT") || !c.done()) return std::nullopt;
  f.day = *day;
  f.year = *year;
  return f;
}

// "Sun Nov  6 08:49:37 1994": the day is two digits or a space and one digit.
std::optional<Fields> asctime_date(std::string_view s) {
  Cursor c(s);
  Fields f;
  if (!c.name(kShortDays) || !c.literal(" ") || !month(c, f) || !c.literal(" ")) return std::nullopt;
  auto day = c.digits(2);
  if (!day && c.literal(" ")) day = c.digits(1);
  if (!day || !c.literal(" ") || !time_of_day(c, f) || !c.literal(" ")) return std::nullopt;
  const auto year = c.digits(4);
  if (!year || !c.done()) return std::nullopt;
  f.day = *day;
  f.year = *year;
  return f;
}

// RFC 9110 §5.6.7: a two-digit year that would be more than 50 years in the future is the most
// recent past year with those digits. Decided by year, not to the second.
std::int64_t resolve_two_digit_year(int yy, std::int64_t now_year) {
  const std::int64_t century = now_year - ((now_year % 100) + 100) % 100;
  std::int64_t year = century + yy;
  if (year > now_year + 50) year -= 100;
  else if (year <= now_year - 50) year += 100;
  return year;
}

// Without a clock, the POSIX strptime("%y") / curl pivot: 69 and below are 20xx.
std::int64_t fixed_two_digit_year(int yy) { return yy < 70 ? 2000 + yy : 1900 + yy; }

std::optional<std::chrono::sys_seconds> to_seconds(const Fields& f) {
  if (f.month < 1 || f.month > 12) return std::nullopt;
  if (f.day < 1 || static_cast<unsigned>(f.day) > days_in_month(f.year, static_cast<unsigned>(f.month))) {
    return std::nullopt;
  }
  // 60 seconds is a leap second, which the grammar allows.
  if (f.hour > 23 || f.minute > 59 || f.second > 60) return std::nullopt;
  const std::int64_t days =
      days_from_civil(f.year, static_cast<unsigned>(f.month), static_cast<unsigned>(f.day));
  const std::int64_t seconds = days * 86400 + f.hour * 3600 + f.minute * 60 + f.second;
  return std::chrono::sys_seconds{std::chrono::seconds{seconds}};
}

// `now_year` empty: no clock, use the fixed pivot for RFC 850 years.
std::optional<std::chrono::sys_seconds> parse_date(std::string_view value, std::optional<std::int64_t> now_year) {
  const std::string_view s = trim(value);
  if (auto f = imf_fixdate(s)) return to_seconds(*f);
  if (auto f = rfc850_date(s)) {
    const int yy = static_cast<int>(f->year);
    f->year = now_year ? resolve_two_digit_year(yy, *now_year) : fixed_two_digit_year(yy);
    return to_seconds(*f);
  }
  if (auto f = asctime_date(s)) return to_seconds(*f);
  return std::nullopt;
}

// Milliseconds since the epoch, floored: the clock's own ticks (ns in libstdc++) would overflow
// when subtracted from a far-future date such as year 9999.
Rep epoch_millis(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<Millis>(t.time_since_epoch()).count();
}

}  // namespace

std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view value) {
  return parse_date(value, std::nullopt);
}

std::optional<Millis> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  const std::string_view s = trim(value);
  if (s.empty()) return std::nullopt;
  if (is_digit(s.front())) {
    const auto seconds = parse_digits(s);
    if (!seconds || *seconds > kRepMax / 1000) return std::nullopt;
    return Millis{*seconds * 1000};
  }
  const Rep now_ms = epoch_millis(now);
  const auto today = std::chrono::floor<std::chrono::days>(now.time_since_epoch()).count();
  const auto date = parse_date(s, year_from_days(today));
  if (!date) return std::nullopt;
  // Whole-second date minus floored now = the wait rounded up: never earlier than the server asked.
  const Rep wait = std::chrono::duration_cast<Millis>(date->time_since_epoch()).count() - now_ms;
  return Millis{wait > 0 ? wait : 0};
}

std::optional<Millis> parse_retry_after_ms(std::string_view value) {
  const std::string_view s = trim(value);
  const auto dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
  if (whole.empty() && fraction.empty()) return std::nullopt;
  if (!only_digits(whole) || !only_digits(fraction)) return std::nullopt;
  Rep ms = 0;
  if (!whole.empty()) {
    const auto parsed = parse_digits(whole);
    if (!parsed) return std::nullopt;
    ms = *parsed;
  }
  // A fraction rounds up, like the date form: waiting a hair longer is harmless, shorter is not.
  if (fraction.find_first_not_of('0') != std::string_view::npos) {
    if (ms == kRepMax) return std::nullopt;
    ++ms;
  }
  return Millis{ms};
}

}  // namespace curlretry::core
