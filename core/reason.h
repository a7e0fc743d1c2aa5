// Why a verdict is what it is, and the verdict as the attempt log and `explain` name it. Each is
// an enum whose spelling lives in one table (core/names.cpp); nothing compares reason strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace curlretry::core {

enum class Reason : std::uint8_t {
  // The response or error itself (DESIGN §3.3); those marked "detail" carry one after a colon.
  status,              // detail: "status:503"
  marker,              // detail: "marker:captcha"
  permanent,           // detail: "permanent:daily quota"
  code,                // detail: "code:1302"
  permanent_code,      // detail: "permanent-code:1113"
  transport,           // detail: "transport:reset"
  stream_error,        // detail: "stream-error:overloaded_error"
  should_retry_true,   // "should-retry:true"
  should_retry_false,  // "should-retry:false"
  not_retryable,
  success,
  // Nothing more could be taken back, or asked again.
  committed,
  host_abort,
  bad_argument,
  not_replayable,
  unanswered_post,
  // Limits.
  exhausted,
  max_elapsed,
  deadline,
  retry_after_too_long,
  // The shim's own: a refreshed credential, the fleet's cooldown and retry budget, `disable`.
  auth_refresh,
  cooldown,
  budget,
  disabled,
};

// "status", "not-replayable", "should-retry:true": the reason's name, without its detail.
std::string_view to_string(Reason reason);
bool has_detail(Reason reason);
// "status:503" from (status, "503"); a reason without detail is its name alone.
std::string reason_text(Reason reason, std::string_view detail);

// A reason as written in the attempt log or by `explain`.
struct ParsedReason {
  Reason reason;
  std::string_view detail;
};
std::optional<ParsedReason> parse_reason(std::string_view text);

// The attempt log's verdict of one attempt; `retry` and `give_up` are also explain's.
enum class VerdictKind : std::uint8_t { retry, give_up, success };
std::string_view to_string(VerdictKind verdict);
std::optional<VerdictKind> verdict_kind_from_string(std::string_view name);

}  // namespace curlretry::core
