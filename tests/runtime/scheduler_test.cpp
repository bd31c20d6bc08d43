// Continuous batching: requests running together produce exactly what they produce alone.
#include "runtime/scheduler.h"

#include <gtest/gtest.h>

#include <thread>

#include "support/test_paths.h"

namespace sinter {
namespace {

struct Fixture {
  std::shared_ptr<LoadedModel> model;
  std::shared_ptr<Tokenizer> tokenizer;
};

Fixture& stories() {
  static Fixture fixture = [] {
    Fixture f;
    auto model = LoadedModel::load(testing::stories_model(), LoadOptions{"cpu", 2});
    EXPECT_TRUE(model);
    f.model = std::move(model).value();
    auto tokenizer = Tokenizer::from_metadata(f.model->file().metadata());
    EXPECT_TRUE(tokenizer);
    f.tokenizer = std::shared_ptr<Tokenizer>(std::move(tokenizer).value());
    return f;
  }();
  return fixture;
}

std::unique_ptr<Scheduler> make(int32_t parallel, int32_t prefill_chunk = 256, size_t max_queue = 64) {
  SchedulerOptions options;
  options.parallel = parallel;
  options.n_ctx = 512 * parallel;
  options.prefill_chunk = prefill_chunk;
  options.max_queue = max_queue;
  auto scheduler = Scheduler::create(stories().model, stories().tokenizer, options);
  EXPECT_TRUE(scheduler) << scheduler.error().message();
  return std::move(scheduler).value();
}

SchedulerRequest request(const std::string& text, uint64_t seed, int32_t n = 24, float temperature = 0.9f) {
  SchedulerRequest r;
  r.prompt = *stories().tokenizer->encode(text);
  r.options.max_tokens = n;
  r.options.sampling.temperature = temperature;
  r.options.sampling.seed = seed;
  return r;
}

struct Outcome {
  std::string text;
  std::vector<TokenId> tokens;
  RequestStats stats;
  bool error = false;
};

Outcome collect(const std::shared_ptr<RequestStream>& stream) {
  Outcome outcome;
  for (const auto& event : stream->drain()) {
    if (event.kind == RequestEvent::Kind::kText) outcome.text += event.text;
    if (event.kind == RequestEvent::Kind::kDone) {
      outcome.tokens = event.tokens;
      outcome.stats = event.stats;
    }
    if (event.kind == RequestEvent::Kind::kError) outcome.error = true;
  }
  return outcome;
}

const char* kPrompts[] = {"Once upon a time",
                          "Lily and Tom went to the park",
                          "The cat",
                          "One day, a big dog",
                          "Once upon a time, there was a king",
                          "Ben liked to play",
                          "The sun was hot",
                          "Sara had a doll"};

TEST(Scheduler, ConcurrentRequestsMatchTheSameRequestsAlone) {
  std::vector<Outcome> alone;
  {
    auto scheduler = make(1);
    for (int i = 0; i < 8; ++i) alone.push_back(collect(*scheduler->submit(request(kPrompts[i], 100 + i))));
  }
  for (int chunk : {256, 3}) {
    auto scheduler = make(4, chunk);
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (int i = 0; i < 8; ++i) streams.push_back(*scheduler->submit(request(kPrompts[i], 100 + i)));
    for (int i = 0; i < 8; ++i) {
      const Outcome together = collect(streams[static_cast<size_t>(i)]);
      EXPECT_EQ(together.tokens, alone[static_cast<size_t>(i)].tokens) << kPrompts[i] << " chunk " << chunk;
      EXPECT_EQ(together.text, alone[static_cast<size_t>(i)].text);
      EXPECT_FALSE(together.tokens.empty());
    }
  }
}

TEST(Scheduler, ReusesACachedPromptPrefix) {
  auto scheduler = make(2);
  const std::string system = "Once upon a time, there was a little girl named Lily. She liked to";
  const Outcome first = collect(*scheduler->submit(request(system + " play", 1, 8, 0.0f)));
  const Outcome second = collect(*scheduler->submit(request(system + " sing", 1, 8, 0.0f)));
  EXPECT_GT(second.stats.prompt_tokens_reused, 10);
  EXPECT_EQ(first.stats.prompt_tokens_reused, 0);
  // Same result as without the cache.
  auto fresh = make(1);
  EXPECT_EQ(collect(*fresh->submit(request(system + " sing", 1, 8, 0.0f))).tokens, second.tokens);
  EXPECT_GT(scheduler->take_metrics().prefix_cache_hits, 0);
}

TEST(Scheduler, BoundedQueueRefusesWithBusy) {
  auto scheduler = make(1, 256, /*max_queue=*/2);
  std::vector<std::shared_ptr<RequestStream>> accepted;
  bool refused = false;
  for (int i = 0; i < 10 && !refused; ++i) {
    auto stream = scheduler->submit(request("Once upon a time", static_cast<uint64_t>(i), 200));
    if (stream) {
      accepted.push_back(*stream);
    } else {
      EXPECT_EQ(stream.error().code(), ErrorCode::kBusy);
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  for (auto& s : accepted) s->cancel();
  for (auto& s : accepted) collect(s);
}

// A client with many requests waiting delays its own, not another client's: with one slot,
// client b's request goes right after the running one, before a's second and third.
TEST(Scheduler, AnotherClientsRequestIsNotQueuedBehindAFlood) {
  auto scheduler = make(1);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const char* client : {"a", "a", "a", "b"}) {
    SchedulerRequest r = request("Once upon a time", 7, 24);
    r.client = client;
    streams.push_back(*scheduler->submit(std::move(r)));
  }
  std::vector<int64_t> admitted;  // each request's queue wait, from its stats
  for (auto& stream : streams) {
    const Outcome outcome = collect(stream);
    EXPECT_EQ(outcome.tokens.size(), 24u);
    admitted.push_back(outcome.stats.queue_ns);
  }
  // The waits of one client grow in its order; b waited less than a's second.
  EXPECT_LT(admitted[0], admitted[1]);
  EXPECT_LT(admitted[1], admitted[2]);
  EXPECT_LT(admitted[3], admitted[1]);
  // a ran one sequence, b none: not unfair enough to take a's slot away.
  EXPECT_EQ(scheduler->take_metrics().preemptions, 0);
}

// A client running every slot gives one up to a request from another client that would wait for
// them: its newest sequence is suspended and resumed later, and every output is what it is alone
// (the resumed one re-computes its prompt and tokens and samples on with the same generator).
TEST(Scheduler, AnotherClientTakesASlotFromAClientRunningThemAll) {
  const auto flood = [](const char* text, uint64_t seed, float temperature) {
    SchedulerRequest r = request(text, seed, 300, temperature);
    r.options.ignore_eos = true;
    r.client = "a";
    return r;
  };
  std::vector<Outcome> alone;
  {
    auto scheduler = make(1);
    alone.push_back(collect(*scheduler->submit(flood("Once upon a time", 11, 0.9f))));
    alone.push_back(collect(*scheduler->submit(flood("The cat", 12, 0.0f))));
    alone.push_back(collect(*scheduler->submit(request("Sara had a doll", 13, 12))));
  }
  auto scheduler = make(2);
  auto first = *scheduler->submit(flood("Once upon a time", 11, 0.9f));
  auto second = *scheduler->submit(flood("The cat", 12, 0.0f));
  // Both run (each has streamed text) before b asks.
  ASSERT_TRUE(first->pop(std::chrono::milliseconds(10000)));
  ASSERT_TRUE(second->pop(std::chrono::milliseconds(10000)));
  SchedulerRequest plain = request("Sara had a doll", 13, 12);
  plain.client = "b";
  const Outcome b = collect(*scheduler->submit(std::move(plain)));
  // b did not wait for a 300-token generation to end.
  EXPECT_EQ(scheduler->take_metrics().preemptions, 1);
  EXPECT_EQ(b.tokens, alone[2].tokens);
  // The first event of each was taken above: compare the tokens.
  const Outcome a1 = collect(first);
  const Outcome a2 = collect(second);
  EXPECT_EQ(a1.tokens, alone[0].tokens);
  EXPECT_EQ(a2.tokens, alone[1].tokens);
  EXPECT_EQ(a1.tokens.size(), 300u);
  EXPECT_EQ(a2.tokens.size(), 300u);
  // Its counts are the request's own, not those of its second start (prompt and tokens).
  EXPECT_EQ(a2.stats.prompt_tokens, alone[1].stats.prompt_tokens);
  EXPECT_EQ(a2.stats.generated_tokens, 300);
  EXPECT_GT(a2.stats.generation_ns, 0);
  EXPECT_EQ(scheduler->take_metrics().active, 0);
}

// Sampling under a grammar runs beside the passes of the other sequences (its own thread): the
// outputs of grammar-constrained and free requests together are what they are alone, also when
// every running sequence is sampling at once.
TEST(Scheduler, GrammarSequencesBesideOthersMatchThemAlone) {
  const auto make_request = [](int i) {
    SchedulerRequest r = request(kPrompts[i], 200 + static_cast<uint64_t>(i), 20);
    if (i % 2 == 0) r.options.grammar = "root ::= [a-z ]+ \".\"";
    return r;
  };
  std::vector<Outcome> alone;
  {
    auto scheduler = make(1);
    for (int i = 0; i < 6; ++i) alone.push_back(collect(*scheduler->submit(make_request(i))));
  }
  for (int parallel : {2, 4}) {
    auto scheduler = make(parallel);
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (int i = 0; i < 6; ++i) streams.push_back(*scheduler->submit(make_request(i)));
    for (int i = 0; i < 6; ++i) {
      const Outcome together = collect(streams[static_cast<size_t>(i)]);
      EXPECT_FALSE(together.error) << kPrompts[i];
      EXPECT_EQ(together.tokens, alone[static_cast<size_t>(i)].tokens)
          << kPrompts[i] << " parallel " << parallel;
      EXPECT_EQ(together.text, alone[static_cast<size_t>(i)].text);
    }
    EXPECT_EQ(scheduler->take_metrics().active, 0);
  }
  // The grammar held: lower-case words, then a full stop.
  for (int i = 0; i < 6; i += 2) {
    const std::string& text = alone[static_cast<size_t>(i)].text;
    EXPECT_EQ(text.find_first_not_of("abcdefghijklmnopqrstuvwxyz ."), std::string::npos) << text;
  }
}

// `r` (a long request) cancelled after its first event ends as cancelled and frees the only slot.
void expect_cancelling_frees_the_slot(SchedulerRequest r) {
  auto scheduler = make(1);
  auto stream = *scheduler->submit(std::move(r));
  ASSERT_TRUE(stream->pop(std::chrono::milliseconds(10000)));
  stream->cancel();
  const Outcome rest = collect(stream);
  EXPECT_EQ(rest.stats.stop_reason, StopReason::kCancelled);
  // The only slot is free again: a new request completes.
  const Outcome next = collect(*scheduler->submit(request("The cat", 6, 4)));
  EXPECT_EQ(next.tokens.size(), 4u);
  EXPECT_EQ(scheduler->take_metrics().active, 0);
}

TEST(Scheduler, CancelledRequestFreesItsSlot) {
  expect_cancelling_frees_the_slot(request("Once upon a time", 5, 500, 0.9f));
}

// A sequence whose grammar samples on its own thread can be cancelled (its slot frees once the
// sample is in) and a scheduler destroyed meanwhile waits for that thread.
TEST(Scheduler, GrammarSequencesCancelAndShutDownCleanly) {
  const auto grammar_request = [](uint64_t seed) {
    SchedulerRequest r = request("Once upon a time", seed, 400);
    r.options.grammar = "root ::= [a-z ]+";
    r.options.ignore_eos = true;
    return r;
  };
  expect_cancelling_frees_the_slot(grammar_request(5));
  std::shared_ptr<RequestStream> orphan;
  {
    auto scheduler = make(2);
    orphan = *scheduler->submit(grammar_request(7));
    auto other = *scheduler->submit(grammar_request(8));
    ASSERT_TRUE(orphan->pop(std::chrono::milliseconds(10000)));
  }  // destroyed while both may be sampling
  bool ended = false;
  for (const auto& event : orphan->drain()) {
    if (event.kind == RequestEvent::Kind::kError || event.kind == RequestEvent::Kind::kDone) ended = true;
  }
  EXPECT_TRUE(ended);
}

TEST(Scheduler, InvalidRequestsAreRefusedAtSubmit) {
  auto scheduler = make(1);
  SchedulerRequest empty;
  EXPECT_FALSE(scheduler->submit(empty));
  auto bad = request("Hello", 1);
  bad.options.sampling.top_p = 2.0f;
  EXPECT_FALSE(scheduler->submit(bad));
  auto long_prompt = request("Hello", 1);
  long_prompt.prompt.assign(600, 300);
  auto refused = scheduler->submit(long_prompt);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kContextFull);
}

}  // namespace
}  // namespace sinter
