#include "core/token_queue.h"

namespace curlretry::core::token_queue {
namespace {

constexpr std::uint32_t kSeenMask = 0xffffffu;

// Whether stamp `a` is later than `b`, both Unix ms mod 2^32 (within 24 days of each other).
bool later(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) > 0; }

bool fresh(Queue queue, std::int64_t now_ms) {
  if (queue.youngest == 0) return false;
  const std::uint32_t age = (static_cast<std::uint32_t>(now_ms) - queue.seen) & kSeenMask;
  return age < static_cast<std::uint32_t>(kWaiterFresh.count());
}

}  // namespace

std::uint64_t pack(Queue queue) {
  return static_cast<std::uint64_t>(queue.youngest) << 32 | static_cast<std::uint64_t>(queue.seen & kSeenMask) << 8 |
         queue.grants;
}

Queue unpack(std::uint64_t word) {
  return Queue{static_cast<std::uint32_t>(word >> 32), static_cast<std::uint32_t>(word >> 8) & kSeenMask,
               static_cast<std::uint8_t>(word)};
}

std::uint32_t stamp_of(std::int64_t born_ms) { return static_cast<std::uint32_t>(born_ms) | 1u; }

bool yields(Queue queue, std::uint32_t born, std::int64_t now_ms) {
  if (queue.grants % kOpenTurn == kOpenTurn - 1) return false;  // the open turn: whoever asks
  return fresh(queue, now_ms) && later(queue.youngest, born);
}

Queue note_waiting(Queue queue, std::uint32_t born, std::int64_t now_ms) {
  if (born == 0) return queue;
  if (!fresh(queue, now_ms) || !later(queue.youngest, born)) {
    queue.youngest = born;
    queue.seen = static_cast<std::uint32_t>(now_ms) & kSeenMask;
  }
  return queue;
}

Queue note_taken(Queue queue, std::uint32_t born) {
  queue.grants = static_cast<std::uint8_t>(queue.grants + 1);
  if (queue.youngest == born) queue.youngest = 0;
  return queue;
}

}  // namespace curlretry::core::token_queue
