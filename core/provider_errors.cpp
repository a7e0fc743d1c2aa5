#include "core/provider_errors.h"

#include <algorithm>
#include <array>
#include <limits>

#include "core/body_scan.h"

namespace curlretry::core {
namespace {

constexpr std::array<std::string_view, 4> kTransient = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "ABORTED", "INTERNAL"};
constexpr std::array<std::string_view, 7> kPermanent = {"INVALID_ARGUMENT", "FAILED_PRECONDITION", "PERMISSION_DENIED",
                                                        "UNAUTHENTICATED",  "NOT_FOUND",           "OUT_OF_RANGE",
                                                        "UNIMPLEMENTED"};
constexpr std::string_view kExhausted = "RESOURCE_EXHAUSTED";
// A quota that refills within a few minutes is worth waiting for; Google names the period in
// the quotaId: GenerateRequestsPerMinutePerProjectPerModel-FreeTier, ...PerDay...
constexpr std::array<std::string_view, 4> kLongPeriods = {"PerDay", "PerWeek", "PerMonth", "PerYear"};
constexpr std::size_t kMaxQuotas = 16;

template <std::size_t N>
bool in(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool long_period(std::string_view quota) {
  return std::any_of(kLongPeriods.begin(), kLongPeriods.end(),
                     [&](std::string_view period) { return quota.find(period) != std::string_view::npos; });
}

}  // namespace

bool google_status_name(std::string_view name) {
  return in(kTransient, name) || in(kPermanent, name) || name == kExhausted;
}

std::optional<ProviderFinding> google_status(std::string_view body) {
  if (body.find("\"status\"") == std::string_view::npos) return std::nullopt;  // cheap filter
  const auto status = json_scalar_at(body, "error.status");
  if (!status || !google_status_name(*status)) return std::nullopt;
  ProviderFinding f;
  f.detail = *status;
  if (in(kTransient, *status)) {
    f.retry = true;
    f.reason = Reason::code;
    return f;
  }
  if (in(kPermanent, *status)) {
    f.reason = Reason::permanent_code;
    f.qualifier = " (permanent)";
    return f;
  }
  const auto quotas = json_strings_named(body, "quotaId", kMaxQuotas);
  if (quotas.empty()) return std::nullopt;
  if (std::any_of(quotas.begin(), quotas.end(), [](const std::string& q) { return long_period(q); })) {
    f.reason = Reason::permanent_code;
    f.qualifier = " per day or longer (permanent)";
    return f;
  }
  f.retry = true;
  f.reason = Reason::code;
  f.qualifier = " per minute";
  return f;
}

std::optional<Millis> google_retry_delay(std::string_view body) {
  if (body.find("\"retryDelay\"") == std::string_view::npos) return std::nullopt;
  const auto values = json_strings_named(body, "retryDelay", 1);
  if (values.empty()) return std::nullopt;
  // Duration JSON: decimal seconds with up to 9 fractional digits and a trailing 's'.
  const std::string_view text = values.front();
  if (text.size() < 2 || text.back() != 's') return std::nullopt;
  const std::string_view number = text.substr(0, text.size() - 1);
  std::int64_t ms = 0;
  std::size_t i = 0;
  constexpr std::int64_t kMaxSeconds = std::numeric_limits<std::int64_t>::max() / 1000 / 10;
  for (; i < number.size() && number[i] >= '0' && number[i] <= '9'; ++i) {
    ms = ms * 10 + (number[i] - '0');
    if (ms > kMaxSeconds) return std::nullopt;
  }
  if (i == 0) return std::nullopt;
  ms *= 1000;
  if (i < number.size()) {
    if (number[i] != '.' || i + 1 == number.size()) return std::nullopt;
    std::int64_t scale = 100;
    bool round_up = false;
    for (++i; i < number.size(); ++i) {
      if (number[i] < '0' || number[i] > '9') return std::nullopt;
      if (scale > 0) {
        ms += (number[i] - '0') * scale;
        scale /= 10;
      } else if (number[i] != '0') {
        round_up = true;  // "0.0004s" waits 1 ms, not 0: the server asked for a wait
      }
    }
    if (round_up) ++ms;
  }
  return Millis{ms};
}

}  // namespace curlretry::core
