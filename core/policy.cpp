#include "core/policy.h"

namespace curlretry::core {

Policy Policy::builtin() {
  Policy p;
  p.max_attempts = 3;
  p.max_elapsed = Millis{30 * 60 * 1000};
  p.backoff = Backoff{Strategy::exponential, Millis{1500}, Millis{60000}, Jitter::none};
  p.honor_retry_after = true;
  p.max_retry_after = Millis{120000};
  // 529 is Anthropic's "overloaded"; the rest are the usual transient HTTP statuses.
  p.retry_status = {408, 429, 500, 502, 503, 504, 529};
  // Risk-control rejections (Chinese API gateways answer them with a 4xx) clear on a retry.
  p.retry_markers = {"captcha", "verify failed", "risk control", "风控", "rate limit", "too many requests",
                     "try again"};
  // Quotas and request-shape errors do not clear by waiting a few seconds, even on a 429.
  // usage_limit_reached: a ChatGPT plan's limit, as Codex signed in with ChatGPT meets it (its
  // error.type); it resets in hours.
  p.permanent_markers = {"per day",        "daily quota",       "monthly",
                         "billing",        "upgrade your plan", "insufficient_quota",
                         "context length", "prompt too long",   "usage_limit_reached"};
  // Timeouts are left out: a retried timeout multiplies the time the host already waited.
  p.retry_transport = {Transport::connect_refused, Transport::reset,         Transport::send,
                       Transport::recv,            Transport::empty_reply,   Transport::tls_handshake,
                       Transport::http2_stream};
  p.codes = {};
  p.retry_unanswered_post = true;
  p.body_window = 4096;
  p.stream = StreamRules{true, 64 * 1024, {}, {"message_start", "ping", "response.created", "response.in_progress"}};
  return p;
}

}  // namespace curlretry::core
