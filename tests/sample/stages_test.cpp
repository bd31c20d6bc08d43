// Each stage on small vocabularies with results computed by hand.
#include "sample/stages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "stage_test_support.h"

namespace sinter {
namespace {

using testing::logits_for;
using testing::OwnedSet;
using Ids = std::vector<TokenId>;
constexpr float kInf = std::numeric_limits<float>::infinity();

// --- candidates ---------------------------------------------------------------------------

TEST(Candidates, ProbabilitiesAreTheSoftmax) {
  OwnedSet s({0.0f, std::log(3.0f), -kInf, std::log(4.0f)});
  ASSERT_TRUE(compute_probabilities(s.set));
  EXPECT_NEAR(s.set.entries[0].p, 1.0 / 8.0, 1e-7);
  EXPECT_NEAR(s.set.entries[1].p, 3.0 / 8.0, 1e-7);
  EXPECT_EQ(s.set.entries[2].p, 0.0f);
  EXPECT_NEAR(s.set.entries[3].p, 4.0 / 8.0, 1e-7);
}

TEST(Candidates, ProbabilitiesOfLargeLogitsDoNotOverflow) {
  const float high = 1000.0f;
  const float low = 1000.0f - std::log(3.0f);  // float spacing at 1000 is 6e-5: not exactly ln 3 below
  OwnedSet s({high, low});
  ASSERT_TRUE(compute_probabilities(s.set));
  const double ratio = std::exp(static_cast<double>(low) - static_cast<double>(high));
  EXPECT_NEAR(s.set.entries[0].p, 1.0 / (1.0 + ratio), 1e-7);
  EXPECT_NEAR(s.set.entries[1].p, ratio / (1.0 + ratio), 1e-7);
  EXPECT_NEAR(s.set.entries[0].p, 0.75, 1e-4);
}

TEST(Candidates, InfiniteLogitsShareTheProbability) {
  OwnedSet s({kInf, 3.0f, kInf});
  ASSERT_TRUE(compute_probabilities(s.set));
  EXPECT_EQ(s.set.entries[0].p, 0.5f);
  EXPECT_EQ(s.set.entries[1].p, 0.0f);
  EXPECT_EQ(s.set.entries[2].p, 0.5f);
}

TEST(Candidates, NoDistributionWhenEveryLogitIsMinusInfinity) {
  OwnedSet s({-kInf, -kInf});
  EXPECT_FALSE(compute_probabilities(s.set));
}

TEST(Candidates, SortLeadingSortsAPrefixAndKeepsTheRestInOrder) {
  std::vector<float> logits = {1.0f, 5.0f, 3.0f, 5.0f, 0.0f, 4.0f, 2.0f};
  Ids tail;  // 33 more tokens below all of those, in descending order
  for (int i = 0; i < 33; ++i) {
    logits.push_back(-1.0f - 0.01f * static_cast<float>(i));
    tail.push_back(static_cast<TokenId>(7 + i));
  }
  const auto with_tail = [&](Ids head) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  OwnedSet s(logits);
  sort_leading(s.set, 3);
  EXPECT_EQ(s.ids(), with_tail({1, 3, 5, 0, 2, 4, 6}));  // ties: lower id first; the rest as before
  EXPECT_EQ(s.set.sorted_count, 3u);
  EXPECT_FALSE(s.set.in_id_order);
  sort_leading(s.set, 5);  // extends the prefix
  EXPECT_EQ(s.ids(), with_tail({1, 3, 5, 2, 6, 0, 4}));
  EXPECT_EQ(s.set.sorted_count, 5u);
  sort_leading(s.set, 100);  // everything
  EXPECT_EQ(s.ids(), with_tail({1, 3, 5, 2, 6, 0, 4}));
  EXPECT_EQ(s.set.sorted_count, 40u);
}

TEST(Candidates, SortLeadingSortsEverythingWhenMostIsWanted) {
  OwnedSet s({1.0f, 5.0f, 3.0f, 5.0f, 0.0f, 4.0f, 2.0f});
  sort_leading(s.set, 3);
  EXPECT_EQ(s.ids(), (Ids{1, 3, 5, 2, 6, 0, 4}));
  EXPECT_EQ(s.set.sorted_count, 7u);
}

// --- top-k --------------------------------------------------------------------------------

TEST(TopK, KeepsTheKLargestSorted) {
  OwnedSet s({1.0f, 3.0f, 2.0f, 3.0f, 0.0f});
  apply_top_k(s.set, 3, 0);
  EXPECT_EQ(s.ids(), (Ids{1, 3, 2}));
}

TEST(TopK, TiesAtTheCutGoToTheLowerId) {
  OwnedSet s({5.0f, 1.0f, 1.0f, 1.0f});
  apply_top_k(s.set, 2, 0);
  EXPECT_EQ(s.ids(), (Ids{0, 1}));
}

TEST(TopK, ZeroOrLargeKChangesNothing) {
  OwnedSet s({1.0f, 3.0f, 2.0f});
  apply_top_k(s.set, 0, 0);
  EXPECT_EQ(s.ids(), (Ids{0, 1, 2}));
  EXPECT_TRUE(s.set.in_id_order);
  apply_top_k(s.set, 40, 0);
  EXPECT_EQ(s.ids(), (Ids{0, 1, 2}));
}

TEST(TopK, MinKeepWins) {
  OwnedSet s({1.0f, 3.0f, 2.0f, 0.0f, -1.0f});
  apply_top_k(s.set, 1, 3);
  EXPECT_EQ(s.ids(), (Ids{1, 2, 0}));
}

// --- top-p --------------------------------------------------------------------------------

TEST(TopP, KeepsTheShortestPrefixReachingP) {
  // p = 1/8, 1/2, 1/8, 1/4 for ids 0..3; sorted: 1 (0.5), 3 (0.75), 0 (0.875), 2 (1.0).
  const std::vector<float> logits = logits_for({1, 4, 1, 2});
  const std::vector<std::pair<float, Ids>> cases = {
      {0.3f, {1}}, {0.7f, {1, 3}}, {0.8f, {1, 3, 0}}, {0.9f, {1, 3, 0, 2}}, {1.0f, {0, 1, 2, 3}}};
  for (const auto& [p, expected] : cases) {
    OwnedSet s(logits);
    apply_top_p(s.set, p, 0);
    EXPECT_EQ(s.ids(), expected) << "top_p " << p;
  }
}

TEST(TopP, UsesTheSoftmaxOfWhatIsLeft) {
  // After a top-k of 2 the two survivors have p = 2/3 and 1/3: top_p 0.6 keeps one.
  OwnedSet s(logits_for({2, 1, 0.5, 0.5}));
  apply_top_k(s.set, 2, 0);
  apply_top_p(s.set, 0.6f, 0);
  EXPECT_EQ(s.ids(), (Ids{0}));
  EXPECT_NEAR(s.set.entries[0].p, 2.0 / 3.0, 1e-6);
}

TEST(TopP, MinKeep) {
  OwnedSet s(logits_for({1, 4, 1, 2}));
  apply_top_p(s.set, 0.3f, 3);
  EXPECT_EQ(s.ids(), (Ids{1, 3, 0}));
}

// Against a plain full sort, over a vocabulary big enough for the partial sort to grow.
TEST(TopP, MatchesAFullSortOnALargeVocabulary) {
  std::vector<float> logits(5000);
  for (size_t i = 0; i < logits.size(); ++i) {
    logits[i] = static_cast<float>(std::sin(static_cast<double>(i) * 12.9898) * 3.0);  // spread, some ties
  }
  for (float p : {0.05f, 0.5f, 0.9f, 0.99f, 0.9999f}) {
    OwnedSet s(logits);
    apply_top_p(s.set, p, 0);

    OwnedSet reference(logits);
    ASSERT_TRUE(compute_probabilities(reference.set));  // in id order, as the stage does
    std::vector<Candidate> sorted(reference.set.entries.begin(), reference.set.entries.end());
    std::sort(sorted.begin(), sorted.end(), ranks_before);
    double cumulative = 0.0;
    Ids expected;
    for (const Candidate& c : sorted) {
      expected.push_back(c.id);
      cumulative += c.p;
      if (cumulative >= p) break;
    }
    EXPECT_EQ(s.ids(), expected) << "top_p " << p;
  }
}

// --- min-p --------------------------------------------------------------------------------

TEST(MinP, KeepsTokensWithinAFactorOfTheMostLikely) {
  // Threshold logit = max + ln(p) = 2 + ln(p).
  const std::vector<float> logits = {2.0f, 0.0f, 1.5f, -1.0f};
  OwnedSet a(logits);
  apply_min_p(a.set, 0.3f, 0);  // threshold 0.796
  EXPECT_EQ(a.ids(), (Ids{0, 2}));
  OwnedSet b(logits);
  apply_min_p(b.set, 0.1f, 0);  // threshold -0.303
  EXPECT_EQ(b.ids(), (Ids{0, 1, 2}));
  OwnedSet c(logits);
  apply_min_p(c.set, 0.0f, 0);
  EXPECT_EQ(c.ids(), (Ids{0, 1, 2, 3}));
  OwnedSet d(logits);
  apply_min_p(d.set, 1.0f, 0);
  EXPECT_EQ(d.ids(), (Ids{0}));
}

TEST(MinP, KeepsTheOrderOfTheCandidates) {
  OwnedSet s({2.0f, 0.0f, 1.5f, -1.0f}, {3, 2, 1, 0});
  apply_min_p(s.set, 0.1f, 0);
  EXPECT_EQ(s.ids(), (Ids{2, 1, 0}));
}

TEST(MinP, MinKeepTakesTheMostLikely) {
  OwnedSet s({2.0f, 0.0f, 1.5f, -1.0f});
  apply_min_p(s.set, 0.9f, 3);
  EXPECT_EQ(s.ids(), (Ids{0, 2, 1}));
}

// --- typical ------------------------------------------------------------------------------

// p = 1/2, 1/4, 1/8, 1/8: H = 1.75 ln 2; surprises ln 2 * {1, 2, 3, 3}; distances from H
// ln 2 * {0.75, 0.25, 1.25, 1.25}. Most typical first: 1, 0, 2, 3; cumulative 0.25, 0.75,
// 0.875, 1.
TEST(Typical, KeepsTheMostTypicalTokensUntilTheirMassExceedsP) {
  const std::vector<float> logits = logits_for({4, 2, 1, 1});
  const std::vector<std::pair<float, Ids>> cases = {
      {0.2f, {1}}, {0.5f, {0, 1}}, {0.8f, {0, 1, 2}}, {0.9f, {0, 1, 2, 3}}, {1.0f, {0, 1, 2, 3}}};
  for (const auto& [p, expected] : cases) {
    OwnedSet s(logits);
    std::vector<TypicalScore> scratch(logits.size());
    apply_typical(s.set, p, 0, scratch);
    EXPECT_EQ(s.ids(), expected) << "typical_p " << p;  // survivors in their previous order
  }
}

TEST(Typical, CanDropTheMostLikelyToken) {
  // p = 0.4, 0.3, 0.3: H = 1.0889; distances 0.173, 0.115, 0.115: tokens 1 and 2 are the most
  // typical and already hold 0.6 > 0.5.
  OwnedSet s(logits_for({0.4, 0.3, 0.3}));
  std::vector<TypicalScore> scratch(3);
  apply_typical(s.set, 0.5f, 0, scratch);
  EXPECT_EQ(s.ids(), (Ids{1, 2}));
}

TEST(Typical, MinKeep) {
  OwnedSet s(logits_for({4, 2, 1, 1}));
  std::vector<TypicalScore> scratch(4);
  apply_typical(s.set, 0.2f, 2, scratch);
  EXPECT_EQ(s.ids(), (Ids{0, 1}));
}

TEST(Typical, KeepsASortedPrefixValid) {
  OwnedSet s(logits_for({4, 2, 1, 1}));
  sort_leading(s.set, 4);
  std::vector<TypicalScore> scratch(4);
  apply_typical(s.set, 0.8f, 0, scratch);
  EXPECT_EQ(s.ids(), (Ids{0, 1, 2}));
  EXPECT_EQ(s.set.sorted_count, 3u);
}

// --- temperature and logit bias -----------------------------------------------------------

TEST(Temperature, DividesTheLogits) {
  OwnedSet s({1.0f, -2.0f, 4.0f});
  apply_temperature(s.set, 0.5f);
  EXPECT_EQ(s.logits(), (std::vector<float>{2.0f, -4.0f, 8.0f}));
  apply_temperature(s.set, 4.0f);
  EXPECT_EQ(s.logits(), (std::vector<float>{0.5f, -1.0f, 2.0f}));
}

TEST(LogitBias, AddsToTheNamedTokensInIdOrder) {
  OwnedSet s({1.0f, 2.0f, 3.0f, 4.0f});
  const std::vector<LogitBias> biases = {{0, -kInf}, {2, 1.5f}};
  apply_logit_bias(s.set, biases);
  EXPECT_EQ(s.logits(), (std::vector<float>{-kInf, 2.0f, 4.5f, 4.0f}));
}

TEST(LogitBias, AddsToTheNamedTokensInAnyOrder) {
  OwnedSet s({1.0f, 2.0f, 3.0f, 4.0f}, {3, 1, 0, 2});
  const std::vector<LogitBias> biases = {{0, -kInf}, {2, 1.5f}};
  apply_logit_bias(s.set, biases);
  EXPECT_EQ(s.ids(), (Ids{3, 1, 0, 2}));
  EXPECT_EQ(s.logits(), (std::vector<float>{4.0f, 2.0f, -kInf, 4.5f}));
}

// --- greedy and draw ----------------------------------------------------------------------

TEST(Greedy, TakesTheLargestLogitAndTheLowestIdOnTies) {
  OwnedSet a({1.0f, 5.0f, 5.0f, 2.0f});
  ASSERT_TRUE(keep_argmax(a.set));
  EXPECT_EQ(a.ids(), (Ids{1}));
  EXPECT_EQ(a.set.entries[0].p, 1.0f);
  OwnedSet b({7.0f, 7.0f}, {1, 0});
  ASSERT_TRUE(keep_argmax(b.set));
  EXPECT_EQ(b.ids(), (Ids{0}));
  OwnedSet c({-kInf, -kInf});
  EXPECT_FALSE(keep_argmax(c.set));
}

TEST(Draw, WalksTheCumulativeProbabilities) {
  // p = 0.25, 0, 0.5, 0.25 in entry order: [0, 0.25) -> 0, [0.25, 0.75) -> 2, [0.75, 1) -> 3.
  OwnedSet s(logits_for({1, 1, 2, 1}));
  s.set.entries[1].logit = -kInf;
  ASSERT_TRUE(compute_probabilities(s.set));
  EXPECT_EQ(draw(s.set, 0.0), 0);
  EXPECT_EQ(draw(s.set, 0.2499), 0);
  EXPECT_EQ(draw(s.set, 0.2501), 2);
  EXPECT_EQ(draw(s.set, 0.7499), 2);
  EXPECT_EQ(draw(s.set, 0.7501), 3);
  EXPECT_EQ(draw(s.set, 1.0 - 0x1p-53), 3);
}

TEST(Draw, NeverPicksAZeroProbabilityToken) {
  OwnedSet s({0.0f, -kInf, 0.0f, -kInf});
  ASSERT_TRUE(compute_probabilities(s.set));
  EXPECT_EQ(draw(s.set, 0.0), 0);
  EXPECT_EQ(draw(s.set, 0.5), 2);
  EXPECT_EQ(draw(s.set, 1.0 - 0x1p-53), 2);
}

}  // namespace
}  // namespace sinter
