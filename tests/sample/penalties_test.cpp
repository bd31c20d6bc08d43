// The token window and the repetition / frequency / presence penalties (llama.cpp semantics).
#include "sample/penalties.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "stage_test_support.h"

namespace sinter {
namespace {

using testing::OwnedSet;

TEST(TokenWindow, SlidingWindowCountsTheLastN) {
  TokenWindow window(8, 3);
  for (TokenId t : {5, 1, 5}) window.push(t);
  EXPECT_EQ(window.count(5), 2);
  EXPECT_EQ(window.count(1), 1);
  window.push(2);  // window 1 5 2
  EXPECT_EQ(window.count(5), 1);
  EXPECT_EQ(window.count(1), 1);
  EXPECT_EQ(window.count(2), 1);
  window.push(7);  // window 5 2 7
  EXPECT_EQ(window.count(1), 0);
  window.push(7);  // window 2 7 7
  EXPECT_EQ(window.count(5), 0);
  EXPECT_EQ(window.count(7), 2);
  EXPECT_EQ(window.size(), 3u);
  window.clear();
  EXPECT_EQ(window.size(), 0u);
  EXPECT_EQ(window.count(7), 0);
  EXPECT_EQ(window.count(2), 0);
  window.push(4);
  EXPECT_EQ(window.count(4), 1);
}

TEST(TokenWindow, DistinctTokensFollowTheWindow) {
  TokenWindow window(10, 4);
  const auto distinct = [&] {
    std::vector<TokenId> tokens(window.distinct_tokens().begin(), window.distinct_tokens().end());
    std::sort(tokens.begin(), tokens.end());
    return tokens;
  };
  for (TokenId t : {3, 3, 7, 1}) window.push(t);
  EXPECT_EQ(distinct(), (std::vector<TokenId>{1, 3, 7}));
  window.push(9);  // 3 7 1 9
  EXPECT_EQ(distinct(), (std::vector<TokenId>{1, 3, 7, 9}));
  window.push(9);  // 7 1 9 9
  EXPECT_EQ(distinct(), (std::vector<TokenId>{1, 7, 9}));
  window.push(0);  // 1 9 9 0
  window.push(0);  // 9 9 0 0
  EXPECT_EQ(distinct(), (std::vector<TokenId>{0, 9}));
  window.clear();
  EXPECT_TRUE(distinct().empty());
  window.push(7);
  EXPECT_EQ(distinct(), (std::vector<TokenId>{7}));
}

TEST(TokenWindow, WindowOfOneKeepsOnlyTheLastToken) {
  TokenWindow window(4, 1);
  window.push(1);
  window.push(2);
  EXPECT_EQ(window.count(1), 0);
  EXPECT_EQ(window.count(2), 1);
}

TEST(TokenWindow, MinusOneKeepsTheWholeHistory) {
  TokenWindow window(4, -1);
  for (int i = 0; i < 10000; ++i) window.push(static_cast<TokenId>(i % 4));
  EXPECT_EQ(window.count(0), 2500);
  EXPECT_EQ(window.count(3), 2500);
  EXPECT_EQ(window.size(), 10000u);
}

TEST(TokenWindow, ZeroKeepsNothing) {
  TokenWindow window(4, 0);
  window.push(1);
  EXPECT_EQ(window.count(1), 0);
  EXPECT_EQ(window.size(), 0u);
}

TEST(Penalties, RepetitionDividesPositiveAndMultipliesNegativeLogits) {
  TokenWindow window(5, 64);
  for (TokenId t : {0, 1, 4}) window.push(t);
  OwnedSet s({2.0f, -1.0f, 0.5f, 3.0f, 0.0f});
  apply_penalties(s.set, window, {2.0f, 0.0f, 0.0f});
  EXPECT_EQ(s.logits(), (std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f, 0.0f}));
}

TEST(Penalties, FrequencyCountsOccurrencesPresenceDoesNot) {
  TokenWindow window(4, 64);
  for (TokenId t : {0, 0, 1, 0}) window.push(t);  // token 0 three times, token 1 once
  OwnedSet s({2.0f, -1.0f, 0.5f, 3.0f});
  apply_penalties(s.set, window, {1.0f, 0.25f, 0.5f});
  // 0: 2 - (3 * 0.25 + 0.5);  1: -1 - (0.25 + 0.5)
  EXPECT_EQ(s.logits(), (std::vector<float>{0.75f, -1.75f, 0.5f, 3.0f}));
}

TEST(Penalties, AllThreeTogether) {
  TokenWindow window(4, 64);
  for (TokenId t : {0, 1, 0}) window.push(t);
  OwnedSet s({2.0f, -1.0f, 0.5f, 3.0f});
  apply_penalties(s.set, window, {2.0f, 0.25f, 0.5f});
  // 0: 2 / 2 - (2 * 0.25 + 0.5) = 0;  1: -1 * 2 - (0.25 + 0.5) = -2.75
  EXPECT_EQ(s.logits(), (std::vector<float>{0.0f, -2.75f, 0.5f, 3.0f}));
}

TEST(Penalties, OnlyTheWindowCounts) {
  TokenWindow window(4, 2);
  for (TokenId t : {3, 0, 1}) window.push(t);  // 3 has left the window
  OwnedSet s({2.0f, 2.0f, 2.0f, 2.0f});
  apply_penalties(s.set, window, {1.0f, 0.0f, 1.0f});
  EXPECT_EQ(s.logits(), (std::vector<float>{1.0f, 1.0f, 2.0f, 2.0f}));
}

TEST(Penalties, WorkOnReorderedCandidates) {
  TokenWindow window(4, 64);
  window.push(2);
  OwnedSet s({1.0f, 2.0f, 3.0f, 4.0f}, {3, 2, 1, 0});
  apply_penalties(s.set, window, {1.5f, 0.0f, 0.0f});
  EXPECT_EQ(s.logits(), (std::vector<float>{4.0f, 2.0f, 2.0f, 1.0f}));
}

// A long pseudo-random history: the window agrees with a naive count of the last n tokens, and
// both ways of applying the penalties (by id, over reordered candidates) agree.
TEST(Penalties, AgreeWithANaiveWindowOverALongHistory) {
  constexpr int32_t kVocab = 30;
  constexpr int32_t kLastN = 50;
  TokenWindow window(kVocab, kLastN);
  std::vector<TokenId> history;
  uint32_t state = 12345;
  for (int step = 0; step < 2000; ++step) {
    state = state * 1664525u + 1013904223u;
    const auto token = static_cast<TokenId>((state >> 16) % kVocab);
    window.push(token);
    history.push_back(token);
    if (step % 97 != 0) continue;

    std::vector<int32_t> naive(kVocab, 0);
    const size_t first = history.size() > kLastN ? history.size() - kLastN : 0;
    for (size_t i = first; i < history.size(); ++i) ++naive[static_cast<size_t>(history[i])];
    size_t distinct = 0;
    std::vector<float> logits(kVocab);
    std::vector<TokenId> reversed(kVocab);
    for (TokenId t = 0; t < kVocab; ++t) {
      ASSERT_EQ(window.count(t), naive[static_cast<size_t>(t)]) << "step " << step << " token " << t;
      distinct += naive[static_cast<size_t>(t)] > 0 ? 1 : 0;
      logits[static_cast<size_t>(t)] = static_cast<float>(t) * 0.5f - 5.0f;
      reversed[static_cast<size_t>(t)] = kVocab - 1 - t;
    }
    ASSERT_EQ(window.distinct_tokens().size(), distinct);

    OwnedSet by_id(logits);
    OwnedSet reordered(logits, reversed);
    const PenaltyOptions options{1.3f, 0.2f, 0.1f};
    apply_penalties(by_id.set, window, options);
    apply_penalties(reordered.set, window, options);
    for (TokenId t = 0; t < kVocab; ++t) {
      ASSERT_EQ(by_id.set.entries[static_cast<size_t>(t)].logit,
                reordered.set.entries[static_cast<size_t>(kVocab - 1 - t)].logit);
    }
  }
}

}  // namespace
}  // namespace sinter
