#include "core/heartbeat.h"

#include <cstdio>

namespace curlretry::core {

void Heartbeat::arm(Time wait_start, Millis wait, Millis period) {
  next_.reset();
  start_ = wait_start;
  end_ = wait_start + wait;
  period_ = period;
  if (period.count() > 0 && wait > period) next_ = wait_start + period;
}

bool Heartbeat::due(Time now) {
  if (!next_ || now < *next_) return false;
  // The first period boundary after `now`.
  const auto periods = (now - start_) / period_ + 1;
  const Time following = start_ + period_ * periods;
  if (following < end_) {
    next_ = following;
  } else {
    next_.reset();
  }
  return true;
}

std::string format_duration(Millis d) {
  long long ms = d.count() < 0 ? 0 : d.count();
  char buf[48];
  if (ms < 10000) {
    // Short test periods still read sensibly: tenths, rounded.
    const long long tenths = (ms + 50) / 100;
    std::snprintf(buf, sizeof buf, "%lld.%llds", tenths / 10, tenths % 10);
    return buf;
  }
  const long long s = (ms + 500) / 1000;
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", s / 3600, (s / 60) % 60, s % 60);
  }
  return buf;
}

std::string heartbeat_cause(int status, bool transport_ok, std::string_view what) {
  if (status <= 0 || !transport_ok) return std::string(what);
  const char* phrase = nullptr;
  switch (status) {
    case 408: phrase = "request timeout"; break;
    case 429: phrase = "rate limited"; break;
    case 500: phrase = "server error"; break;
    case 502: phrase = "bad gateway"; break;
    case 503: phrase = "unavailable"; break;
    case 504: phrase = "gateway timeout"; break;
    case 529: phrase = "overloaded"; break;
    default: break;
  }
  if (phrase != nullptr) return std::to_string(status) + " " + phrase;
  // "HTTP 400 captcha (risk-control)" -> "400 captcha (risk-control)": the marker says more.
  constexpr std::string_view kHttp = "HTTP ";
  if (what.substr(0, kHttp.size()) == kHttp) return std::string(what.substr(kHttp.size()));
  return std::to_string(status);
}

std::string heartbeat_line(std::string_view request, std::string_view cause, int attempt, Millis so_far,
                           Millis next_try) {
  std::string line = "still waiting for ";
  line += request;
  line += " (";
  line += cause;
  line += ", attempt " + std::to_string(attempt) + ", " + format_duration(so_far) + " so far, next try in " +
          format_duration(next_try) + ")";
  return line;
}

}  // namespace curlretry::core
