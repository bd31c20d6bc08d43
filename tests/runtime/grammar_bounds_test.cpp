// A grammar past its bounds (sample/grammar/grammar_budget.h) ends its own request with the
// error, at once, and the other requests of the same forward passes go on unchanged.
#include <gtest/gtest.h>

#include <string>

#include "scheduler_test_support.h"
#include "support/grammar_bombs.h"

namespace sinter {
namespace {

using testing::collect_choices;
using testing::make_stories_scheduler;
using testing::stories_request;

TEST(GrammarBounds, AGrammarPastItsBoundsEndsOnlyItsRequest) {
  const auto alone =
      collect_choices(*make_stories_scheduler(1)->submit(stories_request("The cat", 3, 16, 0.0f)));
  ASSERT_EQ(alone.at(0).tokens.size(), 16u);

  auto scheduler = make_stories_scheduler(2);
  SchedulerRequest bomb = stories_request("Once upon a time", 1, 30, 0.0f);
  bomb.options.grammar = testing::expansion_bomb();
  auto bomb_stream = scheduler->submit(bomb);
  ASSERT_TRUE(bomb_stream.ok()) << bomb_stream.error().message();
  auto other_stream = scheduler->submit(stories_request("The cat", 3, 16, 0.0f));
  ASSERT_TRUE(other_stream.ok());

  const auto bombed = collect_choices(*bomb_stream);
  ASSERT_EQ(bombed.count(0), 1u);
  EXPECT_TRUE(bombed.at(0).error);
  EXPECT_EQ(bombed.at(0).finals, 1);
  EXPECT_NE(bombed.at(0).error_message.find("simplify it"), std::string::npos) << bombed.at(0).error_message;
  const auto other = collect_choices(*other_stream);
  EXPECT_FALSE(other.at(0).error) << other.at(0).error_message;
  EXPECT_EQ(other.at(0).tokens, alone.at(0).tokens);
  EXPECT_EQ(other.at(0).text, alone.at(0).text);
}

}  // namespace
}  // namespace sinter
