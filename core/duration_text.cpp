#include "core/duration_text.h"

namespace curlretry::core {

std::string human_duration(Millis duration) {
  const long long ms = duration.count();
  if (ms <= 10'000) return std::to_string(ms) + " ms";
  if (ms < 3'600'000) {
    // Tenths only when they are there: "25 s", "12.5 s".
    const long long tenths = (ms + 50) / 100;
    std::string text = std::to_string(tenths / 10);
    if (tenths % 10 != 0) text += "." + std::to_string(tenths % 10);
    return text + " s";
  }
  const long long minutes = (ms + 30'000) / 60'000;
  std::string text = std::to_string(minutes / 60) + " h";
  if (minutes % 60 != 0) text += " " + std::to_string(minutes % 60) + " min";
  return text;
}

}  // namespace curlretry::core
