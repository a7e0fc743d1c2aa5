// What the providers' own error envelopes say, known without any configuration: Google's
// google.rpc.Status ({"error":{"code":503,"status":"UNAVAILABLE","details":[...]}}), in an error
// body and in an in-band stream event alike. A user's `codes` tables are consulted first; this
// comes before the generic body markers, because Google's per-minute quota message mentions
// "billing" (a permanent marker) while only its quotaId says whether waiting helps.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/outcome.h"
#include "core/reason.h"

namespace curlretry::core {

struct ProviderFinding {
  bool retry = false;
  Reason reason = Reason::not_retryable;  // code (transient) or permanent_code
  std::string detail;                     // the status: "UNAVAILABLE", "RESOURCE_EXHAUSTED"
  std::string qualifier;                  // for the log line: "", " per minute", " (permanent)"
};

// Google's error.status, when the body carries one of google.rpc.Code's names:
// UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED and INTERNAL are transient; RESOURCE_EXHAUSTED is
// transient when every quota it names is per second, minute or hour, permanent when one is per
// day or longer, and undecided (nullopt: the generic steps decide) when it names none; the
// request-shape and credential statuses are permanent. nullopt for any other body.
std::optional<ProviderFinding> google_status(std::string_view body);

// True for the google.rpc.Code names google_status() knows, so that a stream error is called by
// that name ("UNAVAILABLE") rather than by its numeric error.code.
bool google_status_name(std::string_view name);

// google.rpc.RetryInfo's retryDelay ("40s", "1.5s": google.protobuf.Duration's JSON form) in the
// body's error.details: the server's own wait, honoured like Retry-After.
std::optional<Millis> google_retry_delay(std::string_view body);

}  // namespace curlretry::core
