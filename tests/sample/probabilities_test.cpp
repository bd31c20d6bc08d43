// softmax and top_probabilities, the helpers behind `sinter probs`.
#include "sample/probabilities.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace sinter {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Softmax, MatchesTheDefinition) {
  const std::vector<float> logits = {0.0f, std::log(3.0f), -kInf, std::log(4.0f)};
  const std::vector<float> p = softmax(logits);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_NEAR(p[0], 0.125, 1e-7);
  EXPECT_NEAR(p[1], 0.375, 1e-7);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_NEAR(p[3], 0.5, 1e-7);
}

TEST(Softmax, AccurateForLargeAndSpreadLogits) {
  // exp(1000) overflows without the shift; 1e-30 relative terms must not disturb the rest.
  const std::vector<float> p = softmax(std::vector<float>{1000.0f, 999.0f, 930.0f});
  const double e1 = std::exp(-1.0), e70 = std::exp(-70.0);
  const double total = 1.0 + e1 + e70;
  EXPECT_FLOAT_EQ(p[0], static_cast<float>(1.0 / total));
  EXPECT_FLOAT_EQ(p[1], static_cast<float>(e1 / total));
  EXPECT_FLOAT_EQ(p[2], static_cast<float>(e70 / total));
}

TEST(Softmax, SumsToOneOverALargeVocabulary) {
  std::vector<float> logits(32000);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>(std::cos(static_cast<double>(i)) * 8.0);
  double sum = 0.0;
  for (float x : softmax(logits)) sum += x;
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(Softmax, DegenerateInputs) {
  EXPECT_TRUE(softmax(std::vector<float>{}).empty());
  const std::vector<float> inf = softmax(std::vector<float>{kInf, 0.0f, kInf});
  EXPECT_EQ(inf, (std::vector<float>{0.5f, 0.0f, 0.5f}));
  for (float x : softmax(std::vector<float>{-kInf, -kInf})) EXPECT_TRUE(std::isnan(x));
  for (float x : softmax(std::vector<float>{1.0f, std::nanf("")})) EXPECT_TRUE(std::isnan(x));
}

TEST(TopProbabilities, SortedByProbabilityThenId) {
  const std::vector<float> logits = {1.0f, 3.0f, 1.0f, 2.0f};
  const auto top = top_probabilities(logits, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 3);
  EXPECT_EQ(top[2].token, 0);
  const std::vector<float> p = softmax(logits);
  EXPECT_EQ(top[0].probability, p[1]);
  EXPECT_EQ(top[2].probability, p[0]);
  const auto all = top_probabilities(logits, 0);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[3].token, 2);
  EXPECT_EQ(top_probabilities(logits, 99).size(), 4u);
}

}  // namespace
}  // namespace sinter
