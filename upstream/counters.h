// Per-key request counters: the Nth request to a key plays step N of its script.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace curlretry::upstream {

class Counters {
 public:
  // Counts one more request to `key`; returns its 1-based number.
  std::uint64_t next(std::string_view key) {
    std::lock_guard lock(mutex_);
    return ++counts_[std::string(key)];
  }
  std::uint64_t get(std::string_view key) const {
    std::lock_guard lock(mutex_);
    auto it = counts_.find(std::string(key));
    return it == counts_.end() ? 0 : it->second;
  }
  void reset(std::string_view key) {
    std::lock_guard lock(mutex_);
    counts_.erase(std::string(key));
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::uint64_t> counts_;
};

}  // namespace curlretry::upstream
