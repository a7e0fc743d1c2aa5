// Counting the overloads of one transfer for its rule's `fallback:`, and what the attempt log
// says once it has switched.
#pragma once

#include <string>
#include <string_view>

#include "config/agent.h"

namespace curlretry::shim {

class FallbackState {
 public:
  void reset() {
    consecutive_ = 0;
    switched_ = false;
    label_.clear();
  }
  // Counts an attempt that is about to be retried: an overload (a listed status, or a listed
  // marker in its body) adds one, anything else starts over. True when the transfer should
  // switch now.
  bool note(const config::Fallback& fallback, int status, std::string_view body);
  int consecutive() const { return consecutive_; }
  bool switched() const { return switched_; }
  void mark_switched(std::string label) {
    switched_ = true;
    label_ = std::move(label);
  }
  // "model claude-y", "url backup.example/v1", both joined by "; ": for the attempt log.
  const std::string& label() const { return label_; }

 private:
  int consecutive_ = 0;
  bool switched_ = false;
  std::string label_;
};

}  // namespace curlretry::shim
