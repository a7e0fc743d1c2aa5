#include <gtest/gtest.h>

#include "core/body_scan.h"

namespace curlretry::core {
namespace {

const std::vector<std::string> kRiskControl{"captcha", "verify failed", "risk control", "风控",
                                            "rate limit", "too many requests", "try again"};

TEST(FindMarker, MatchesIgnoringAsciiCase) {
  EXPECT_EQ(find_marker("Please solve the CAPTCHA", kRiskControl), "captcha");
  EXPECT_EQ(find_marker("Rate Limit exceeded", kRiskControl), "rate limit");
  EXPECT_EQ(find_marker("TOO MANY REQUESTS", kRiskControl), "too many requests");
}

TEST(FindMarker, Utf8MarkerMatchesByteForByte) {
  EXPECT_EQ(find_marker(R"({"msg":"触发风控，请稍后再试"})", kRiskControl), "风控");
}

TEST(FindMarker, FirstMarkerInListOrderWinsNotFirstInBody) {
  EXPECT_EQ(find_marker(R"({"code":3007,"msg":"captcha verify failed"})", kRiskControl), "captcha");
  EXPECT_EQ(find_marker("verify failed, captcha", kRiskControl), "captcha");
}

TEST(FindMarker, ReturnsThePolicySpellingNotTheBodyText) {
  const auto found = find_marker("RISK CONTROL", kRiskControl);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, "risk control");
}

TEST(FindMarker, NoMatchGivesNothing) {
  EXPECT_EQ(find_marker(R"({"error":"bad request"})", kRiskControl), std::nullopt);
  EXPECT_EQ(find_marker("", kRiskControl), std::nullopt);
  EXPECT_EQ(find_marker("captcha", {}), std::nullopt);
}

TEST(FindMarker, PartialMarkerAtEndDoesNotMatch) {
  EXPECT_EQ(find_marker("please try aga", kRiskControl), std::nullopt);
}

TEST(FindMarker, EmptyMarkerNeverMatches) {
  EXPECT_EQ(find_marker("anything", {"", "thing"}), "thing");
  EXPECT_EQ(find_marker("anything", {""}), std::nullopt);
}

TEST(FindMarker, CaseFoldingDoesNotTouchNonAsciiBytes) {
  // 0xC3 0x89 is "É"; folding it as if Latin-1 would turn it into "é" (0xC3 0xA9).
  EXPECT_EQ(find_marker("\xC3\x89t\xC3\xA9", {"\xC3\xA9t\xC3\xA9"}), std::nullopt);
  EXPECT_EQ(find_marker("\xC3\x89T\xC3\xA9", {"\xC3\x89t\xC3\xA9"}), "\xC3\x89t\xC3\xA9");
}

TEST(FindMarker, BinaryBodyWithNulBytesIsScannedWhole) {
  const std::string body("\0\0captcha", 9);
  EXPECT_EQ(find_marker(body, kRiskControl), "captcha");
}

}  // namespace
}  // namespace curlretry::core
