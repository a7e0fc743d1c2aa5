// Randomness for jitter, injected so tests can pin it.
#pragma once

#include <cstdint>

namespace curlretry::core {

class Random {
 public:
  virtual ~Random() = default;
  // Uniform in [0, 1).
  virtual double uniform() = 0;
};

// A small, fast, seeded generator (splitmix64); not for cryptography.
class SplitMix final : public Random {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  double uniform() override;

 private:
  std::uint64_t state_;
};

}  // namespace curlretry::core
