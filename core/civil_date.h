// Proleptic Gregorian calendar arithmetic on days since 1970-01-01 (H. Hinnant's algorithms):
// HTTP-dates in Retry-After, the attempt log's timestamps, and `curlretry stats`' buckets.
#pragma once

#include <cstdint>

namespace curlretry::core {

struct CivilDate {
  std::int64_t year;
  unsigned month;  // 1-12
  unsigned day;    // 1-31
};

// Days since 1970-01-01 of a date (negative before it); month 1-12, day 1-31.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);
// The date `days` after 1970-01-01.
CivilDate civil_from_days(std::int64_t days);

}  // namespace curlretry::core
