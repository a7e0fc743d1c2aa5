// The one UTF-8 check and encoder (JSON quoting, the config reader, body codes).
#include "core/utf8.h"

#include <gtest/gtest.h>

namespace curlretry::core::utf8 {
namespace {

TEST(Utf8, SequenceLengths) {
  EXPECT_EQ(sequence_length("a", 0), 1u);
  EXPECT_EQ(sequence_length("\xC3\xA4", 0), 2u);          // ä
  EXPECT_EQ(sequence_length("\xE9\xA3\x8E", 0), 3u);      // 风
  EXPECT_EQ(sequence_length("\xF0\x9F\x98\x80", 0), 4u);  // U+1F600
}

TEST(Utf8, RefusesWhatRfc3629Refuses) {
  bool truncated = false;
  EXPECT_EQ(sequence_length("\xC0\x80", 0, &truncated), 0u);  // overlong NUL
  EXPECT_EQ(sequence_length("\xED\xA0\x80", 0), 0u);          // surrogate
  EXPECT_EQ(sequence_length("\xF4\x90\x80\x80", 0), 0u);      // above U+10FFFF
  EXPECT_EQ(sequence_length("\x80", 0), 0u);                  // a lone continuation byte
  EXPECT_EQ(sequence_length("\xC3x", 0), 0u);                 // not a continuation byte
  EXPECT_FALSE(truncated);
  EXPECT_EQ(sequence_length("\xE9\xA3", 0, &truncated), 0u);
  EXPECT_TRUE(truncated);
}

TEST(Utf8, AppendEncodesEveryLength) {
  std::string out;
  for (std::uint32_t cp : {0x41u, 0xE4u, 0x98CEu, 0x1F600u}) append(out, cp);
  EXPECT_EQ(out, "A\xC3\xA4\xE9\xA3\x8E\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace curlretry::core::utf8
