// The spelling of each enum is shared by config files, `curlretry explain` and verdict reasons
// ("transport:reset"), so there is exactly one table per enum.
#include <array>
#include <cstddef>

#include "core/outcome.h"
#include "core/policy.h"
#include "core/reason.h"

namespace curlretry::core {
namespace {

constexpr std::array<std::string_view, 12> kTransportNames{
    "ok",           "connect_refused", "reset",   "send",       "recv",         "empty_reply",
    "tls_handshake", "http2_stream",   "timeout", "host_abort", "bad_argument", "other",
};
static_assert(kTransportNames.size() == static_cast<std::size_t>(Transport::other) + 1);

constexpr std::array<std::string_view, 3> kStrategyNames{"exponential", "triangular", "constant"};
static_assert(kStrategyNames.size() == static_cast<std::size_t>(Strategy::constant) + 1);

constexpr std::array<std::string_view, 4> kJitterNames{"none", "full", "equal", "decorrelated"};
static_assert(kJitterNames.size() == static_cast<std::size_t>(Jitter::decorrelated) + 1);

// The attempt log, `explain` and `stats` all read these: their spelling is part of the log format.
constexpr std::array<std::string_view, 24> kReasonNames{
    // In the order of core/reason.h: with a detail, the response's own, taking nothing back,
    // limits, the shim's own.
    "status", "marker", "permanent", "code", "permanent-code", "transport", "stream-error",
    "should-retry:true", "should-retry:false", "not-retryable", "success",
    "committed", "host-abort", "bad-argument", "not-replayable", "unanswered-post",
    "exhausted", "max-elapsed", "deadline", "retry-after-too-long",
    "auth-refresh", "cooldown", "budget", "disabled",
};
static_assert(kReasonNames.size() == static_cast<std::size_t>(Reason::disabled) + 1);
// The reasons that name what matched after a colon (status:503); they come first in the enum.
constexpr auto kLastWithDetail = Reason::stream_error;

constexpr std::array<std::string_view, 3> kVerdictNames{"retry", "give_up", "success"};
static_assert(kVerdictNames.size() == static_cast<std::size_t>(VerdictKind::success) + 1);

// An enum can hold any value of its underlying type (a cast from bad data), so never index blindly.
template <typename Enum, std::size_t N>
std::string_view name_of(Enum value, const std::array<std::string_view, N>& names) {
  const auto index = static_cast<std::size_t>(value);
  return index < N ? names[index] : std::string_view{"unknown"};
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(std::string_view name, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Transport t) { return name_of(t, kTransportNames); }
std::string_view to_string(Strategy s) { return name_of(s, kStrategyNames); }
std::string_view to_string(Jitter j) { return name_of(j, kJitterNames); }

std::optional<Transport> transport_from_string(std::string_view name) {
  return value_of<Transport>(name, kTransportNames);
}
std::optional<Strategy> strategy_from_string(std::string_view name) {
  return value_of<Strategy>(name, kStrategyNames);
}
std::optional<Jitter> jitter_from_string(std::string_view name) { return value_of<Jitter>(name, kJitterNames); }

std::string_view to_string(Reason reason) { return name_of(reason, kReasonNames); }
bool has_detail(Reason reason) { return reason <= kLastWithDetail; }

std::string reason_text(Reason reason, std::string_view detail) {
  std::string text(to_string(reason));
  if (has_detail(reason)) {
    text += ':';
    text += detail;
  }
  return text;
}

std::optional<ParsedReason> parse_reason(std::string_view text) {
  if (auto whole = value_of<Reason>(text, kReasonNames); whole && !has_detail(*whole)) return ParsedReason{*whole, {}};
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto kind = value_of<Reason>(text.substr(0, colon), kReasonNames);
  if (!kind || !has_detail(*kind)) return std::nullopt;
  return ParsedReason{*kind, text.substr(colon + 1)};
}

std::string_view to_string(VerdictKind verdict) { return name_of(verdict, kVerdictNames); }
std::optional<VerdictKind> verdict_kind_from_string(std::string_view name) {
  return value_of<VerdictKind>(name, kVerdictNames);
}

}  // namespace curlretry::core
