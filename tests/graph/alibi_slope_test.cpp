// ALiBi's head slopes (Press et al., "Train Short, Test Long"): for n heads a power of two, the
// geometric sequence 2^(−8/n), 2^(−16/n), …, 2^(−8); otherwise the sequence of the largest power
// of two below n, then every other slope of the sequence for twice that many heads.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/graph.h"

namespace sinter {
namespace {

TEST(AlibiSlope, PowerOfTwoHeadsFollowOneGeometricSequence) {
  for (int64_t h = 0; h < 8; ++h) {
    EXPECT_FLOAT_EQ(alibi_slope(h, 8, 8.0f), std::exp2(-static_cast<float>(h + 1))) << "head " << h;
  }
  EXPECT_FLOAT_EQ(alibi_slope(0, 16, 8.0f), std::exp2(-0.5f));
  // powf of the base rounds: within a few units in the last place, as llama.cpp's.
  EXPECT_NEAR(alibi_slope(15, 16, 8.0f), std::exp2(-8.0f), 1e-6 * std::exp2(-8.0f));
}

TEST(AlibiSlope, OtherHeadCountsTakeEveryOtherSlopeOfTheNextSequence) {
  // 12 heads: the 8-head slopes 2^-1 … 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (the odd
  // entries of the 16-head sequence).
  for (int64_t h = 0; h < 8; ++h)
    EXPECT_FLOAT_EQ(alibi_slope(h, 12, 8.0f), std::exp2(-static_cast<float>(h + 1)));
  for (int64_t h = 8; h < 12; ++h) {
    EXPECT_FLOAT_EQ(alibi_slope(h, 12, 8.0f), std::exp2(-0.5f - static_cast<float>(h - 8))) << "head " << h;
  }
}

TEST(AlibiSlope, TheMaximumBiasScalesTheExponents) {
  EXPECT_FLOAT_EQ(alibi_slope(0, 4, 4.0f), std::exp2(-1.0f));
  EXPECT_FLOAT_EQ(alibi_slope(3, 4, 4.0f), std::exp2(-4.0f));
}

}  // namespace
}  // namespace sinter
