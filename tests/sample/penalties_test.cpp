// The token window and the repetition / frequency / presence penalties (llama.cpp semantics).
#include "sample/penalties.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sinter
