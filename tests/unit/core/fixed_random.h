// A Random that always returns the same value, so jittered delays are exact in tests.
#pragma once

#include "core/random.h"

namespace curlretry::core::testing {

class FixedRandom final : public Random {
 public:
  explicit FixedRandom(double value = 0.0) : value_(value) {}
  double uniform() override {
    ++calls_;
    return value_;
  }
  int calls() const { return calls_; }

 private:
  double value_;
  int calls_ = 0;
};

}  // namespace curlretry::core::testing
