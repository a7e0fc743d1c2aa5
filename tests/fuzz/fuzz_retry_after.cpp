// Retry-After (delta-seconds or any of the three HTTP-date forms) and retry-after-ms: values the
// server chooses, parsed inside the host. A wait is never negative; a date never wraps around;
// any "now" (the host's clock can be anything) is fine.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <fuzzer/FuzzedDataProvider.h>

#include "core/retry_after.h"
#include "tests/fuzz/fuzz_check.h"

using namespace curlretry::core;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  // Any clock system_clock can represent (nanoseconds: 1678..2262), or a few fixed points.
  constexpr std::int64_t kLimit = 9'200'000'000;
  std::int64_t now_s = 0;
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: now_s = 1'700'000'000; break;
    case 1: now_s = in.ConsumeIntegralInRange<std::int64_t>(0, 4'102'444'800); break;  // 1970..2100
    case 2: now_s = in.ConsumeIntegralInRange<std::int64_t>(-kLimit, kLimit); break;
    default: now_s = kLimit; break;
  }
  const std::chrono::system_clock::time_point now{std::chrono::seconds(now_s)};
  const std::string value = in.ConsumeRemainingBytesAsString();

  if (const auto wait = parse_retry_after(value, now)) FUZZ_CHECK(wait->count() >= 0);
  if (const auto ms = parse_retry_after_ms(value)) FUZZ_CHECK(ms->count() >= 0);
  const auto date = parse_http_date(value);
  // IMF-fixdate and asctime need no clock (RFC 850's two-digit year does): the wait is the date
  // minus now, rounded up, and 0 for a date in the past. Compared in seconds: a year-9999 date
  // does not fit system_clock's nanoseconds.
  if (date && value.find('-') == std::string::npos) {
    const auto wait = parse_retry_after(value, now);
    FUZZ_CHECK(wait.has_value());
    const std::int64_t date_s = date->time_since_epoch().count();
    if (date_s <= now_s) FUZZ_CHECK(wait->count() == 0);
    else FUZZ_CHECK(wait->count() == (date_s - now_s) * 1000);
  }
  return 0;
}
