// Several completions of one prompt (SchedulerRequest::n): the prompt is computed once and
// shared, choice 0 is the single request with the same seed, each choice has its own seed
// stream, and they run in the same passes.
#include <thread>

#include "runtime/scheduler_test_support.h"
#include "sample/random.h"

namespace sinter {
namespace {

using testing::collect_choices;
using testing::make_stories_scheduler;
using testing::stories_request;

constexpr const char* kPrompt = "Once upon a time, there was a little girl named Lily. She";

std::vector<TokenId> single(const SchedulerRequest& r) {
  auto scheduler = make_stories_scheduler(1);
  auto outcomes = collect_choices(*scheduler->submit(r));
  EXPECT_EQ(outcomes.size(), 1u);
  return outcomes[0].tokens;
}

TEST(SeveralChoices, EachHasItsOwnSeedStreamAndChoiceZeroIsTheSingleRequest) {
  auto scheduler = make_stories_scheduler(4);
  auto request = stories_request(kPrompt, 42, 16, 0.9f, /*n=*/3);
  request.options.ignore_eos = true;
  auto stream = scheduler->submit(request);
  ASSERT_TRUE(stream) << stream.error().message();
  EXPECT_EQ((*stream)->choices(), 3);
  auto outcomes = collect_choices(*stream);
  ASSERT_EQ(outcomes.size(), 3u);
  for (int32_t i = 0; i < 3; ++i) {
    const auto& choice = outcomes[i];
    EXPECT_EQ(choice.finals, 1);
    EXPECT_FALSE(choice.error) << choice.error_message;
    EXPECT_EQ(choice.tokens.size(), 16u);
    EXPECT_EQ(choice.stats.seed, choice_seed(42, i));
    // Each choice is reproducible alone with its reported seed; choice 0's seed is the request's.
    auto alone = stories_request(kPrompt, choice_seed(42, i), 16, 0.9f);
    alone.options.ignore_eos = true;
    EXPECT_EQ(single(alone), choice.tokens) << "choice " << i;
  }
  EXPECT_EQ(outcomes[0].stats.seed, 42u);
  EXPECT_NE(outcomes[0].tokens, outcomes[1].tokens);
  EXPECT_NE(outcomes[0].tokens, outcomes[2].tokens);
  EXPECT_NE(outcomes[1].tokens, outcomes[2].tokens);

  // The prompt was computed once: the other choices took all of it from choice 0's cells.
  const int32_t prompt_tokens = outcomes[0].stats.prompt_tokens;
  EXPECT_EQ(outcomes[0].stats.prompt_tokens_reused, 0);
  EXPECT_EQ(outcomes[1].stats.prompt_tokens_reused, prompt_tokens);
  EXPECT_EQ(outcomes[2].stats.prompt_tokens_reused, prompt_tokens);
  const SchedulerMetrics metrics = scheduler->take_metrics();
  EXPECT_EQ(metrics.prompt_tokens - metrics.prompt_tokens_reused, prompt_tokens);
  EXPECT_EQ(metrics.forked_sequences, 2);
  EXPECT_EQ(metrics.requests_finished, 1);
  EXPECT_EQ(metrics.generated_tokens, 3 * 16);
  // The same passes as one choice: the prompt, then one pass per further token for all three.
  EXPECT_EQ(metrics.forward_passes, 16);
  EXPECT_EQ(metrics.active, 0);
}

TEST(SeveralChoices, GreedyChoicesAreIdentical) {
  auto scheduler = make_stories_scheduler(3);
  auto outcomes = collect_choices(*scheduler->submit(stories_request(kPrompt, 1, 12, 0.0f, 3)));
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_FALSE(outcomes[0].tokens.empty());
  EXPECT_EQ(outcomes[0].tokens, outcomes[1].tokens);
  EXPECT_EQ(outcomes[0].tokens, outcomes[2].tokens);
  EXPECT_EQ(outcomes[0].text, outcomes[2].text);
  EXPECT_EQ(single(stories_request(kPrompt, 1, 12, 0.0f)), outcomes[1].tokens);
}

TEST(SeveralChoices, MoreChoicesThanSlotsAreRefused) {
  auto scheduler = make_stories_scheduler(2);
  for (int32_t n : {0, -1, 3}) {
    auto refused = scheduler->submit(stories_request(kPrompt, 1, 4, 0.5f, n));
    ASSERT_FALSE(refused) << n;
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.error().message().find("n must be between 1 and 2"), std::string::npos)
        << refused.error().message();
  }
  EXPECT_TRUE(scheduler->submit(stories_request(kPrompt, 1, 4, 0.5f, 2)));
}

TEST(SeveralChoices, CancellingTheRequestStopsEveryChoice) {
  auto scheduler = make_stories_scheduler(3);
  auto request = stories_request(kPrompt, 9, 400, 0.9f, 3);
  request.options.ignore_eos = true;
  auto stream = *scheduler->submit(request);
  ASSERT_TRUE(stream->pop(std::chrono::milliseconds(10000)));
  stream->cancel();
  auto outcomes = collect_choices(stream);
  ASSERT_EQ(outcomes.size(), 3u);
  for (auto& [choice, outcome] : outcomes) {
    EXPECT_EQ(outcome.finals, 1);
    EXPECT_EQ(outcome.stats.stop_reason, StopReason::kCancelled) << "choice " << choice;
    EXPECT_LT(outcome.tokens.size(), 400u);
  }
  EXPECT_EQ(scheduler->take_metrics().active, 0);
  // A cancelled request still waiting in the queue ends every choice too.
  auto blocker = *scheduler->submit(stories_request(kPrompt, 2, 400, 0.9f, 3));
  auto queued = *scheduler->submit(stories_request(kPrompt, 3, 4, 0.9f, 2));
  queued->cancel();
  blocker->cancel();
  EXPECT_EQ(collect_choices(queued).size(), 2u);
  EXPECT_EQ(collect_choices(blocker).size(), 3u);
}

// A request for 2 choices waits for two free slots while another request runs, and a request
// behind it does not overtake it; all results are what they are alone.
TEST(SeveralChoices, WaitsForEnoughFreeSlotsAndMatchesRunningAlone) {
  auto scheduler = make_stories_scheduler(2);
  auto first = stories_request("The cat", 5, 30, 0.9f);
  auto group = stories_request(kPrompt, 6, 10, 0.9f, 2);
  auto last = stories_request("Ben liked to play", 7, 10, 0.9f);
  auto first_stream = *scheduler->submit(first);
  auto group_stream = *scheduler->submit(group);
  auto last_stream = *scheduler->submit(last);
  auto first_out = collect_choices(first_stream);
  auto group_out = collect_choices(group_stream);
  auto last_out = collect_choices(last_stream);
  EXPECT_EQ(first_out[0].tokens, single(first));
  group.n = 1;
  EXPECT_EQ(group_out[0].tokens, single(group));
  EXPECT_EQ(last_out[0].tokens, single(last));
  EXPECT_EQ(group_out.size(), 2u);
  EXPECT_GE(last_out[0].stats.queue_ns, group_out[0].stats.queue_ns);
}

// Log-probabilities with several choices: each choice's first entry comes from the same
// distribution (the shared prompt's last logits).
TEST(SeveralChoices, ChoicesShareTheFirstDistribution) {
  auto scheduler = make_stories_scheduler(2);
  auto request = stories_request(kPrompt, 4, 6, 1.0f, 2);
  request.options.logprobs = true;
  request.options.top_logprobs = 4;
  auto outcomes = collect_choices(*scheduler->submit(request));
  ASSERT_EQ(outcomes.size(), 2u);
  ASSERT_FALSE(outcomes[0].logprobs.empty());
  ASSERT_FALSE(outcomes[1].logprobs.empty());
  const auto& a = outcomes[0].logprobs[0].top;
  const auto& b = outcomes[1].logprobs[0].top;
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(a[r].token, b[r].token);
    EXPECT_EQ(a[r].logprob, b[r].logprob);
  }
}

}  // namespace
}  // namespace sinter
