#include "core/random.h"

namespace curlretry::core {

double SplitMix::uniform() {
  // splitmix64 (Steele, Lea, Flood 2014): one add and two multiply-xorshift rounds; every seed,
  // including 0, gives a full-period stream.
  state_ += 0x9e3779b97f4a7c15ULL;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  // The top 53 bits fill a double's mantissa exactly, so the result is < 1.0 by construction.
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace curlretry::core
