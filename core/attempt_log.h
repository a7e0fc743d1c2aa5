// The attempt log's field names, spelled once: the shim's writer (shim/events.cpp) emits them
// in this order and `curlretry stats` (cli/stats.cpp) reads them by these names. What each
// field means is in shim/events.h.
#pragma once

#include <array>
#include <string_view>

namespace curlretry::core::attempt_log {

inline constexpr std::string_view kTime = "time";
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kProgram = "program";
inline constexpr std::string_view kMethod = "method";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kPath = "path";
inline constexpr std::string_view kAttempt = "attempt";
inline constexpr std::string_view kStatus = "status";
inline constexpr std::string_view kOutcome = "outcome";
inline constexpr std::string_view kVerdict = "verdict";
inline constexpr std::string_view kReason = "reason";
inline constexpr std::string_view kDelayMs = "delay_ms";
inline constexpr std::string_view kBytes = "bytes";
inline constexpr std::string_view kRule = "rule";
inline constexpr std::string_view kFallback = "fallback";  // only after a switch to the fallback

// Every field in the order a line has them (`fallback` last, and only when present).
inline constexpr std::array<std::string_view, 15> kFields = {
    kTime, kPid, kProgram, kMethod, kHost, kPath, kAttempt, kStatus,
    kOutcome, kVerdict, kReason, kDelayMs, kBytes, kRule, kFallback};

}  // namespace curlretry::core::attempt_log
