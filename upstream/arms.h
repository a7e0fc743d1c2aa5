// Armed paths: `/arm/<key>/<script>?path=<prefix>` makes every later request whose path starts
// with <prefix> play `/s/<key>/<script>`, so that a program with fixed API paths (an agent CLI
// posting to /v1/messages) meets a scripted failure without a URL of ours.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace curlretry::upstream {

class Arms {
 public:
  // `target` is "<key>/<script>"; a prefix armed again is replaced.
  void arm(std::string prefix, std::string target) {
    std::lock_guard lock(mutex_);
    for (auto& [p, t] : arms_) {
      if (p == prefix) {
        t = std::move(target);
        return;
      }
    }
    arms_.emplace_back(std::move(prefix), std::move(target));
  }
  // The "<key>/<script>" of the longest armed prefix of `path`.
  std::optional<std::string> find(std::string_view path) const {
    std::lock_guard lock(mutex_);
    const std::pair<std::string, std::string>* best = nullptr;
    for (const auto& entry : arms_) {
      if (path.starts_with(entry.first) && (!best || entry.first.size() > best->first.size())) best = &entry;
    }
    if (!best) return std::nullopt;
    return best->second;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> arms_;
};

}  // namespace curlretry::upstream
