// The stories model behind a scheduler, and helpers to submit requests and collect their events
// (for tests of several completions and log-probabilities through the scheduler).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/scheduler.h"
#include "support/test_paths.h"

namespace sinter::testing {

struct StoriesFixture {
  std::shared_ptr<LoadedModel> model;
  std::shared_ptr<Tokenizer> tokenizer;
};

inline StoriesFixture& stories_fixture() {
  static StoriesFixture fixture = [] {
    StoriesFixture f;
    auto model = LoadedModel::load(stories_model(), LoadOptions{"cpu", 2});
    EXPECT_TRUE(model) << model.error().message();
    f.model = std::move(model).value();
    auto tokenizer = Tokenizer::from_metadata(f.model->file().metadata());
    EXPECT_TRUE(tokenizer);
    f.tokenizer = std::shared_ptr<Tokenizer>(std::move(tokenizer).value());
    return f;
  }();
  return fixture;
}

inline std::unique_ptr<Scheduler> make_stories_scheduler(int32_t parallel) {
  SchedulerOptions options;
  options.parallel = parallel;
  options.n_ctx = 512 * parallel;
  auto scheduler = Scheduler::create(stories_fixture().model, stories_fixture().tokenizer, options);
  EXPECT_TRUE(scheduler) << scheduler.error().message();
  return std::move(scheduler).value();
}

inline SchedulerRequest stories_request(const std::string& text, uint64_t seed, int32_t max_tokens,
                                        float temperature, int32_t n = 1) {
  SchedulerRequest r;
  r.prompt = *stories_fixture().tokenizer->encode(text);
  r.options.max_tokens = max_tokens;
  r.options.sampling.temperature = temperature;
  r.options.sampling.seed = seed;
  r.n = n;
  return r;
}

// One choice's events, gathered.
struct ChoiceOutcome {
  std::string text;
  std::vector<TokenId> tokens;  // from the final event
  std::vector<TokenLogprob> logprobs;
  RequestStats stats;
  int finals = 0;  // final events seen for this choice (must be 1)
  bool error = false;
  std::string error_message;
};

// Every choice's outcome, by choice index.
inline std::map<int32_t, ChoiceOutcome> collect_choices(const std::shared_ptr<RequestStream>& stream) {
  std::map<int32_t, ChoiceOutcome> outcomes;
  for (auto& event : stream->drain()) {
    ChoiceOutcome& outcome = outcomes[event.choice];
    EXPECT_EQ(outcome.finals, 0) << "an event of choice " << event.choice << " after its final event";
    switch (event.kind) {
      case RequestEvent::Kind::kText:
        outcome.text += event.text;
        for (auto& entry : event.logprobs) outcome.logprobs.push_back(std::move(entry));
        break;
      case RequestEvent::Kind::kDone:
        outcome.tokens = event.tokens;
        outcome.stats = event.stats;
        ++outcome.finals;
        break;
      case RequestEvent::Kind::kError:
        outcome.error = true;
        outcome.error_message = event.text;
        ++outcome.finals;
        break;
    }
  }
  return outcomes;
}

}  // namespace sinter::testing
