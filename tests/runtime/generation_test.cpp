// Generation through the library API: seeded sampling, context shifts, stop strings, errors.
#include <cstring>

#include "runtime/runtime_test_support.h"
#include "sinter/engine.h"

namespace sinter {
namespace {

std::unique_ptr<Engine> load(int threads = 2, int32_t n_ctx = 0,
                             const std::string& path = testing::stories_model()) {
  EngineOptions options;
  options.threads = threads;
  options.n_ctx = n_ctx;
  auto engine = Engine::load(path, options);
  EXPECT_TRUE(engine) << engine.error().message();
  return engine ? std::move(engine).value() : nullptr;
}

GenerationOptions sampled(uint64_t seed, int32_t n = 40) {
  GenerationOptions options;
  options.max_tokens = n;
  options.sampling.temperature = 1.0f;
  options.sampling.seed = seed;
  return options;
}

TEST(SeededSampling, SameSeedSameTokensAcrossRunsAndThreads) {
  auto engine = load(2);
  ASSERT_TRUE(engine);
  auto first = engine->generate("Once upon a time", sampled(42));
  auto second = engine->generate("Once upon a time", sampled(42));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->tokens, second->tokens);
  EXPECT_EQ(first->seed, 42u);
  auto single_thread = load(1);
  auto third = single_thread->generate("Once upon a time", sampled(42));
  ASSERT_TRUE(third);
  EXPECT_EQ(first->tokens, third->tokens);
  auto other = engine->generate("Once upon a time", sampled(43));
  ASSERT_TRUE(other);
  EXPECT_NE(first->tokens, other->tokens);
}

TEST(ContextShift, GenerationContinuesPastTheContextAndKeepsThePrefix) {
  auto engine = load(2, /*n_ctx=*/48);
  ASSERT_TRUE(engine);
  GenerationOptions options;
  options.max_tokens = 150;
  options.sampling.temperature = 0.0f;
  options.overflow = OverflowPolicy::kShift;
  options.keep = 4;
  options.ignore_eos = true;
  auto prompt = engine->tokenize("Once upon a time, a girl");
  ASSERT_TRUE(prompt);
  const std::vector<TokenId> kept(prompt->begin(), prompt->begin() + 5);  // BOS + 4 kept tokens

  // Record the kept cells' keys before generating, and compare after the shifts.
  auto result = engine->generate_tokens(*prompt, options);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->tokens.size(), 150u);
  EXPECT_GT(result->context_shifts, 0);
  EXPECT_EQ(result->stop_reason, StopReason::kMaxTokens);
  KvCache& cache = engine->context().cache();
  EXPECT_EQ(cache.min_position(0), 0);
  EXPECT_LE(cache.max_position(0), 47);

  // The kept prefix is intact: its cells hold exactly what a fresh pass over the same kept
  // tokens writes there.
  auto fresh = load(2, 48);
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < kept.size(); ++i) batch.push_back({kept[i], static_cast<Position>(i), 0, false});
  ASSERT_TRUE(fresh->context().decode(batch));
  AttentionIndex after, reference;
  std::vector<CacheToken> probe;
  for (Position p = 0; p < 5; ++p) probe.push_back({0, p});
  cache.fill_attention_index(probe, true, 0, &after);
  fresh->context().cache().fill_attention_index(probe, true, 0, &reference);
  for (int layer = 0; layer < cache.layer_count(); ++layer) {
    for (int p = 0; p < 5; ++p) {
      const int32_t cell = after.cells[static_cast<size_t>(after.end[static_cast<size_t>(p)] - 1)];
      const int32_t fresh_cell =
          reference.cells[static_cast<size_t>(reference.end[static_cast<size_t>(p)] - 1)];
      for (int64_t head = 0; head < cache.keys(layer)->ne[2]; ++head) {
        EXPECT_EQ(std::memcmp(cache.keys(layer)->row(cell, head),
                              fresh->context().cache().keys(layer)->row(fresh_cell, head),
                              cache.keys(layer)->row_bytes()),
                  0)
            << "layer " << layer << " position " << p << " head " << head;
      }
    }
  }
}

TEST(ContextShift, ErrorPolicyStopsAtTheContextAndRefusesLongPrompts) {
  auto engine = load(2, 16);
  ASSERT_TRUE(engine);
  GenerationOptions options;
  options.max_tokens = 100;
  options.sampling.temperature = 0.0f;
  options.ignore_eos = true;
  auto result = engine->generate("Once upon a time", options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->stop_reason, StopReason::kContextFull);
  // Every cell holds a token; the last generated token was sampled but needs no cell.
  EXPECT_EQ(static_cast<int>(result->tokens.size()) + result->prompt_tokens, 16 + 1);
  auto too_long = engine->generate(
      "Once upon a time there was a little girl who liked to play in the park every day", options);
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code(), ErrorCode::kContextFull);
}

TEST(StopStrings, GenerationEndsBeforeTheStopStringAndNeverShowsIt) {
  auto engine = load();
  ASSERT_TRUE(engine);
  GenerationOptions options;
  options.max_tokens = 60;
  options.sampling.temperature = 0.0f;
  auto full = engine->generate("Once upon a time", options);
  ASSERT_TRUE(full);
  const auto at = full->text.find("Lily");
  ASSERT_NE(at, std::string::npos) << full->text;
  options.stop = {"Lily"};
  std::string streamed;
  auto stopped = engine->stream("Once upon a time", options, [&](std::string_view text) {
    streamed += text;
    return true;
  });
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->stop_reason, StopReason::kStopString);
  EXPECT_EQ(stopped->text, full->text.substr(0, at));
  EXPECT_EQ(streamed, stopped->text);
}

TEST(EngineErrors, BadInputsAreErrorsNotCrashes) {
  auto engine = load();
  ASSERT_TRUE(engine);
  GenerationOptions options;
  EXPECT_FALSE(engine->generate("", options));
  options.max_tokens = 0;
  EXPECT_FALSE(engine->generate("Hello", options));
  options.max_tokens = 5;
  options.sampling.temperature = -1.0f;
  EXPECT_FALSE(engine->generate("Hello", options));
  options.sampling.temperature = 0.8f;
  options.sampling.top_p = 1.5f;
  EXPECT_FALSE(engine->generate("Hello", options));
  const std::vector<TokenId> bad = {1, 9999};
  EXPECT_FALSE(engine->eval(bad, std::vector<int32_t>{1}));
  EXPECT_FALSE(engine->generate_tokens(bad, GenerationOptions{}));
  EXPECT_FALSE(Engine::load("/nonexistent/model.gguf"));
}

}  // namespace
}  // namespace sinter
