// What the store's tests share: a fixed instant and a store opened in a scratch directory.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fleet/store.h"
#include "temp_dir.h"

namespace curlretry::fleet::testing {

inline constexpr std::int64_t kNow = 1'764'460'800'000;  // 2025-11-30, a multiple of the slot width

// The store in `dir`, opened without an error (a test failure otherwise); its notes into `notes`.
inline std::unique_ptr<Store> open_store(const std::string& dir, std::vector<std::string>* notes = nullptr) {
  std::string error;
  std::vector<std::string> ignored;
  auto store = Store::open(dir, error, notes ? *notes : ignored);
  EXPECT_EQ(error, "");
  return store;
}

}  // namespace curlretry::fleet::testing
