// Engine::switch_backend: a loaded model moves between backends in the middle of a generation,
// its sequence keeping every cached cell, and the tokens are those of staying on one backend.
#include <gtest/gtest.h>

#include "sinter/engine.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

GenerationOptions greedy(int32_t tokens) {
  GenerationOptions options;
  options.max_tokens = tokens;
  options.sampling.temperature = 0;
  return options;
}

std::unique_ptr<Engine> load_stories(const std::string& backend) {
  EngineOptions options;
  options.backend = backend;
  options.n_ctx = 256;
  auto engine = Engine::load(testing::stories_model(), options);
  EXPECT_TRUE(engine) << engine.error().message();
  return engine ? std::move(engine).value() : nullptr;
}

TEST(SwitchBackend, CpuToReferenceAndBackMidGenerationKeepsTheTokens) {
  const char* prompt = "Once upon a time";
  auto staying = load_stories("cpu");
  ASSERT_TRUE(staying);
  auto expected = staying->generate(prompt, greedy(120));
  ASSERT_TRUE(expected) << expected.error().message();
  ASSERT_EQ(expected->tokens.size(), 120u);

  auto switching = load_stories("cpu");
  ASSERT_TRUE(switching);
  // Between pieces of text: to the reference after the 20th, back to the CPU after the 70th.
  int pieces = 0;
  std::vector<std::string> backends;
  Status switched = ok_status();
  auto result = switching->stream(prompt, greedy(120), [&](std::string_view) {
    ++pieces;
    if (pieces == 20 || pieces == 70) {
      switched = switching->switch_backend(pieces == 20 ? "reference" : "cpu");
      backends.emplace_back(switching->model().backend().name());
    }
    return static_cast<bool>(switched);
  });
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(switched) << switched.error().message();
  EXPECT_EQ(backends, (std::vector<std::string>{"reference", "cpu"}));
  EXPECT_EQ(result->tokens, expected->tokens);
}

TEST(SwitchBackend, TheWeightsAndTheCacheMoveToTheNewBackend) {
  auto engine = load_stories("cpu");
  ASSERT_TRUE(engine);
  ASSERT_TRUE(engine->generate("Lily", greedy(8)));
  EXPECT_EQ(engine->context().cache().backend(), "cpu");
  ASSERT_TRUE(engine->switch_backend("reference"));
  EXPECT_EQ(engine->model().backend().name(), "reference");
  EXPECT_EQ(engine->context().cache().backend(), "reference");
  ASSERT_FALSE(engine->model().weight_placements().empty());
  for (const WeightPlacement& weight : engine->model().weight_placements()) {
    EXPECT_EQ(weight.backend, "reference") << weight.name;
    EXPECT_EQ(weight.buffer, BufferKind::kHostMapped) << weight.name;  // the file's pages, adopted
  }
}

TEST(SwitchBackend, AnUnknownBackendIsRefusedAndNothingChanges) {
  auto engine = load_stories("cpu");
  ASSERT_TRUE(engine);
  const Status status = engine->switch_backend("tpu");
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("unknown backend 'tpu'"), std::string::npos)
      << status.error().message();
  EXPECT_EQ(engine->model().backend().name(), "cpu");
  auto result = engine->generate("Lily", greedy(8));
  EXPECT_TRUE(result) << result.error().message();
}

}  // namespace
}  // namespace sinter
