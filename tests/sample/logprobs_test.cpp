// Log-probabilities of the model's distribution (log-softmax of raw logits) and their top-k, and
// the per-choice seeds of n > 1 requests.
#include "sample/logprobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "sample/random.h"

namespace sinter {
namespace {

// The definition, straight: log(exp(l_i) / sum_j exp(l_j)) in long double.
std::vector<double> naive_log_softmax(const std::vector<float>& logits) {
  long double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<long double>(l));
  std::vector<double> out;
  for (float l : logits)
    out.push_back(static_cast<double>(std::log(std::exp(static_cast<long double>(l)) / sum)));
  return out;
}

std::vector<float> wavy_logits(size_t n) {
  std::vector<float> logits(n);
  for (size_t i = 0; i < n; ++i) logits[i] = static_cast<float>(std::sin(static_cast<double>(i) * 1.7) * 6.0);
  return logits;
}

TEST(LogSoftmaxTop, MatchesTheDefinitionForTheTokenAndTheTopK) {
  const std::vector<float> logits = wavy_logits(500);
  const std::vector<double> reference = naive_log_softmax(logits);
  std::vector<size_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] > logits[b]; });

  std::vector<LogprobValue> top;
  for (TokenId token : {0, 17, 499}) {
    const float lp = log_softmax_top(logits, token, 7, top);
    EXPECT_NEAR(lp, reference[static_cast<size_t>(token)], 1e-5) << token;
    ASSERT_EQ(top.size(), 7u);
    for (size_t r = 0; r < top.size(); ++r) {
      EXPECT_EQ(top[r].token, static_cast<TokenId>(order[r])) << "rank " << r;
      EXPECT_NEAR(top[r].logprob, reference[order[r]], 1e-5);
      if (r > 0) {
        EXPECT_GE(top[r - 1].logprob, top[r].logprob);
      }
    }
  }
  // Probabilities of the whole vocabulary sum to one.
  log_softmax_top(logits, 0, logits.size(), top);
  double total = 0;
  for (const auto& v : top) total += std::exp(static_cast<double>(v.logprob));
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(LogSoftmaxTop, ZeroKGivesOnlyTheTokenAndTiesGoToTheLowerId) {
  std::vector<LogprobValue> top = {{3, 1.0f}};
  const std::vector<float> flat(4, 2.0f);
  EXPECT_NEAR(log_softmax_top(flat, 2, 0, top), std::log(0.25), 1e-6);
  EXPECT_TRUE(top.empty());
  log_softmax_top(flat, 2, 3, top);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].token, 0);
  EXPECT_EQ(top[1].token, 1);
  EXPECT_EQ(top[2].token, 2);
  log_softmax_top(flat, 2, 10, top);  // k beyond the vocabulary
  EXPECT_EQ(top.size(), 4u);
}

TEST(LogSoftmaxTop, BannedTokensHaveMinusInfinityAndHugeLogitsStayFinite) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {1000.0f, -kInf, 999.0f, -kInf};
  std::vector<LogprobValue> top;
  EXPECT_EQ(log_softmax_top(logits, 1, 4, top), -kInf);
  ASSERT_EQ(top.size(), 4u);
  EXPECT_EQ(top[0].token, 0);
  EXPECT_NEAR(top[0].logprob, -std::log1p(std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(top[1].logprob, -1.0 - std::log1p(std::exp(-1.0)), 1e-6);
  EXPECT_EQ(top[2].logprob, -kInf);
  EXPECT_EQ(top[2].token, 1);
  EXPECT_EQ(log_softmax_top(logits, 7, 0, top), -kInf);  // an id outside the logits
}

TEST(ChoiceSeed, ChoiceZeroIsTheSeedAndOthersFollowSplitMix64) {
  EXPECT_EQ(choice_seed(42, 0), 42u);
  SplitMix64 stream(42);
  std::vector<uint64_t> seeds = {42};
  for (int32_t i = 1; i < 5; ++i) {
    EXPECT_EQ(choice_seed(42, i), stream.next());
    seeds.push_back(choice_seed(42, i));
  }
  std::sort(seeds.begin(), seeds.end());
  EXPECT_EQ(std::unique(seeds.begin(), seeds.end()), seeds.end());
}

}  // namespace
}  // namespace sinter
