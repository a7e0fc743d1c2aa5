// Shared builders for decide() tests: one attempt's outcome in a line, decided at a fixed instant.
#pragma once

#include <chrono>
#include <string>

#include "core/decide.h"
#include "fixed_random.h"

namespace curlretry::core::testing {

inline const std::chrono::system_clock::time_point kNow =
    std::chrono::sys_days{std::chrono::year{2026} / 1 / 15} + std::chrono::hours{12};

inline Outcome response(int status, std::string body = {}, int attempt = 1) {
  Outcome o;
  o.status = status;
  o.body_prefix = std::move(body);
  o.attempt = attempt;
  return o;
}

// A 200 event stream's in-band error event: its type and its data.
inline Outcome stream_error(std::string event_type, std::string data, int attempt = 1) {
  Outcome o;
  o.status = 200;
  o.stream_error = std::move(data);
  o.stream_error_event = std::move(event_type);
  o.attempt = attempt;
  return o;
}

inline Outcome failure(Transport transport, int attempt = 1) {
  Outcome o;
  o.transport = transport;
  o.attempt = attempt;
  return o;
}

inline const Policy kBuiltin = Policy::builtin();

inline Verdict decide_at(const Policy& policy, const Outcome& outcome, double random_value = 0.0) {
  FixedRandom random(random_value);
  return decide(policy, outcome, random, kNow);
}

}  // namespace curlretry::core::testing
