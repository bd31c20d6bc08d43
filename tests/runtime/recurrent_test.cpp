// Pure recurrent models (mamba, Falcon-Mamba's variant, mamba2) through the runtime, on
// random-weight files from `sinter synth`: a sequence's next-token probabilities are
// bit-identical however its prompt is split into passes and whatever other sequences share them,
// on both backends; the memory stays the same size however long a sequence grows; a sequence cut
// back to a checkpoint continues exactly; and the Engine generates past any context size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "memory/recurrent_state.h"
#include "runtime/context.h"
#include "runtime/runtime_test_support.h"
#include "sinter/engine.h"

namespace sinter {
namespace {

struct RecurrentCase {
  const char* name;
  const char* architecture;
  const char* preset;
};
const RecurrentCase kCases[] = {
    {"mamba", "mamba", "tiny"},
    {"falcon_mamba", "mamba", "falcon-tiny"},
    {"mamba2", "mamba2", "tiny"},
};

const std::string& model_file(const RecurrentCase& c) {
  static std::map<std::string, std::string> made;
  auto [it, fresh] = made.emplace(c.name, "");
  if (fresh) {
    it->second = testing::scratch_dir() + "/../recurrent-" + c.name + ".gguf";
    SynthOptions options;
    options.architecture = c.architecture;
    options.preset = c.preset;
    options.seed = 9;
    auto status = synthesize(options, it->second);
    EXPECT_TRUE(status) << status.error().message();
  }
  return it->second;
}

std::vector<TokenId> prompt_tokens(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 37 + salt * 101) % 500));
  return ids;
}

using Rows = std::vector<std::vector<float>>;

// Softmax of one row of logits, in double then rounded (the probabilities `sinter probs` prints).
std::vector<float> probabilities(std::span<const float> logits) {
  double top = logits[0];
  for (float l : logits) top = std::max(top, static_cast<double>(l));
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - top);
  std::vector<float> p;
  for (float l : logits) p.push_back(static_cast<float>(std::exp(static_cast<double>(l) - top) / sum));
  return p;
}

// Probabilities after every position of `ids`, as sequence `sequence`, fed in passes of `chunk`
// tokens with `others` interleaved into the same passes as the other sequences.
Rows run(Context& context, const std::vector<TokenId>& ids, int chunk,
         const std::vector<std::vector<TokenId>>& others = {}, SequenceId sequence = 0) {
  context.memory().clear();
  Rows rows;
  for (size_t start = 0; start < ids.size(); start += static_cast<size_t>(chunk)) {
    std::vector<BatchEntry> batch;
    const size_t end = std::min(ids.size(), start + static_cast<size_t>(chunk));
    for (size_t i = start; i < end; ++i) {
      SequenceId other = 0;
      for (const auto& tokens : others) {
        if (other == sequence) ++other;
        if (i < tokens.size()) batch.push_back({tokens[i], static_cast<Position>(i), other, true});
        ++other;
      }
      batch.push_back({ids[i], static_cast<Position>(i), sequence, true});
    }
    EXPECT_TRUE(context.decode(batch));
    for (int k = 0; k < context.output_count(); ++k) {
      if (batch[static_cast<size_t>(k)].sequence == sequence)
        rows.push_back(probabilities(context.logits(k)));
    }
  }
  return rows;
}

bool identical(const Rows& a, const Rows& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

class Recurrent : public ::testing::TestWithParam<std::tuple<int, const char*>> {
 protected:
  const RecurrentCase& model_case() const { return kCases[std::get<0>(GetParam())]; }
  std::string backend() const { return std::get<1>(GetParam()); }
};

TEST_P(Recurrent, ProbabilitiesAreBitIdenticalHoweverThePromptIsBatched) {
  auto model = LoadedModel::load(model_file(model_case()), LoadOptions{backend(), 2});
  ASSERT_TRUE(model) << model.error().message();
  ASSERT_TRUE((*model)->model().shape().kv_layers.empty());
  ContextOptions options;
  options.n_ctx = 64;  // smaller than the prompt: a recurrent model has no context limit
  options.n_seq_max = 4;
  auto context = Context::create(*model, options);
  ASSERT_TRUE(context) << context.error().message();
  EXPECT_EQ((*context)->memory().kv(), nullptr);
  const auto ids = prompt_tokens(80, 0);
  const Rows one_batch = run(**context, ids, 80);
  ASSERT_EQ(one_batch.size(), 80u);
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 7))) << "in passes of 7";
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 1))) << "one token a pass";
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 80, {prompt_tokens(80, 1), prompt_tokens(31, 2)})))
      << "beside two other sequences";
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 7, {prompt_tokens(50, 3), prompt_tokens(80, 4)}, 2)))
      << "as sequence 2, in passes of 7 beside two others";
  EXPECT_FALSE(identical(one_batch, run(**context, prompt_tokens(80, 9), 80)));  // the comparison can fail
}

// A sequence cut back to the checkpoint at the end of its prompt, then given the same tokens
// again, continues with the probabilities it had: the checkpoint restores its state exactly.
TEST_P(Recurrent, ASequenceCutBackToItsCheckpointContinuesExactly) {
  auto model = LoadedModel::load(model_file(model_case()), LoadOptions{backend(), 2});
  ASSERT_TRUE(model) << model.error().message();
  auto context = Context::create(*model, ContextOptions{});
  ASSERT_TRUE(context) << context.error().message();
  SequenceMemory& memory = (*context)->memory();
  const auto prompt = prompt_tokens(20, 5), more = prompt_tokens(12, 6);
  const auto feed = [&](const std::vector<TokenId>& ids, Position from) {
    std::vector<BatchEntry> batch;
    for (size_t i = 0; i < ids.size(); ++i)
      batch.push_back({ids[i], from + static_cast<Position>(i), 0, i + 1 == ids.size()});
    EXPECT_TRUE((*context)->decode(batch));
    const auto logits = (*context)->logits(0);
    return std::vector<float>(logits.begin(), logits.end());
  };
  feed(prompt, 0);
  memory.checkpoint(0);
  const auto first = feed(more, 20);
  EXPECT_EQ(memory.resumable_prefix(0, 20), 20);
  memory.remove(0, 20, -1);
  EXPECT_EQ(memory.max_position(0), 19);
  const auto again = feed(more, 20);
  EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0);
}

// 1600 tokens through a context of 64: the state is the same bytes at every pass, the
// checkpoints stay within their budget, and the memory a context needs does not depend on its
// size.
TEST_P(Recurrent, MemoryStaysConstantAsASequenceGrows) {
  auto model = LoadedModel::load(model_file(model_case()), LoadOptions{backend(), 2});
  ASSERT_TRUE(model) << model.error().message();
  const ModelShape& shape = (*model)->model().shape();
  ContextOptions options;
  options.n_ctx = 64;
  options.n_batch = 64;
  options.state_checkpoint_bytes = 2 * RecurrentState::sequence_bytes_for(shape.recurrent_layers);
  auto context = Context::create(*model, options);
  ASSERT_TRUE(context) << context.error().message();
  SequenceMemory& memory = (*context)->memory();
  ASSERT_NE(memory.recurrent(), nullptr);
  EXPECT_EQ(memory.kv(), nullptr);
  EXPECT_EQ(memory.cell_count(), SequenceMemory::kUnboundedCells);
  const size_t state_bytes = RecurrentState::bytes_for(recurrent_state_options(shape, options));
  EXPECT_EQ(memory.bytes(), state_bytes);
  ContextOptions huge = options;
  huge.n_ctx = 1 << 20;
  EXPECT_EQ(memory_bytes_for(shape, options), memory_bytes_for(shape, huge));

  const auto ids = prompt_tokens(64 * 25, 7);  // 1600 tokens, 25 times the context
  size_t bytes_after_budget = 0;
  for (size_t start = 0; start < ids.size(); start += 64) {
    std::vector<BatchEntry> batch;
    for (size_t i = start; i < start + 64; ++i)
      batch.push_back({ids[i], static_cast<Position>(i), 0, i + 1 == start + 64});
    ASSERT_TRUE((*context)->decode(batch)) << "at position " << start;
    const RecurrentState& state = *memory.recurrent();
    EXPECT_EQ(memory.bytes() - state.checkpoint_bytes(), state_bytes);
    EXPECT_LE(state.checkpoint_bytes(), options.state_checkpoint_bytes);
    if (start + 64 == 1088) bytes_after_budget = memory.bytes();  // two checkpoints (512, 1024) by now
  }
  EXPECT_EQ(memory.bytes(), bytes_after_budget);  // the checkpoint at 1536 replaced the oldest
  EXPECT_EQ(memory.recurrent()->checkpoint_count(), 2u);
  EXPECT_EQ(memory.used_cells(), static_cast<int32_t>(ids.size()));
  EXPECT_EQ(memory.max_position(0), static_cast<Position>(ids.size()) - 1);
  for (float l : (*context)->logits(0)) ASSERT_TRUE(std::isfinite(l));
}

// The Engine with a context of 16 generates 300 tokens after a 12-token prompt: no context
// shift, no "context full", the tokens of a context of 4096, and the memory it started with.
TEST_P(Recurrent, TheEngineGeneratesPastAnyContextSize) {
  std::vector<std::vector<TokenId>> generated;
  for (int32_t n_ctx : {16, 4096}) {
    EngineOptions engine_options;
    engine_options.backend = backend();
    engine_options.threads = 2;
    engine_options.n_ctx = n_ctx;
    auto engine = Engine::load(model_file(model_case()), engine_options);
    ASSERT_TRUE(engine) << engine.error().message();
    const size_t bytes = (*engine)->context().memory().bytes();
    GenerationOptions options;
    options.max_tokens = 300;
    options.sampling.temperature = 0.0f;
    options.overflow = OverflowPolicy::kError;  // a shift would be an error: none is needed
    options.ignore_eos = true;
    auto result = (*engine)->generate_tokens(prompt_tokens(12, 8), options);
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->tokens.size(), 300u);
    EXPECT_EQ(result->stop_reason, StopReason::kMaxTokens);
    EXPECT_EQ(result->context_shifts, 0);
    SequenceMemory& memory = (*engine)->context().memory();
    EXPECT_EQ(memory.bytes() - memory.recurrent()->checkpoint_bytes(), bytes);
    generated.push_back(result->tokens);
  }
  EXPECT_EQ(generated[0], generated[1]);
}

// Engine::switch_backend mid-generation moves the state with the weights: the greedy tokens are
// those of staying on the CPU (the two backends' probabilities differ by ~1e-7 at most: Mamba-1's
// SIMD scan rounds e^x differently).
TEST(RecurrentSwitch, TheStateMovesBetweenBackendsMidGeneration) {
  for (const RecurrentCase& c : kCases) {
    GenerationOptions options;
    options.max_tokens = 60;
    options.sampling.temperature = 0.0f;
    options.ignore_eos = true;
    EngineOptions engine_options;
    engine_options.threads = 2;
    auto staying = Engine::load(model_file(c), engine_options);
    auto switching = Engine::load(model_file(c), engine_options);
    ASSERT_TRUE(staying && switching);
    auto expected = (*staying)->generate("Once upon a time", options);
    ASSERT_TRUE(expected) << expected.error().message();
    int pieces = 0;
    Status switched = ok_status();
    auto result = (*switching)->stream("Once upon a time", options, [&](std::string_view) {
      ++pieces;
      if (pieces == 20 || pieces == 40)
        switched = (*switching)->switch_backend(pieces == 20 ? "reference" : "cpu");
      return static_cast<bool>(switched);
    });
    ASSERT_TRUE(switched) << c.name << ": " << switched.error().message();
    ASSERT_TRUE(result) << c.name << ": " << result.error().message();
    EXPECT_GT(pieces, 40) << c.name << ": both switches happened";
    EXPECT_EQ(result->tokens, expected->tokens) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Recurrent,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kCases))),
                                            ::testing::Values("cpu", "reference")),
                         [](const auto& param_info) {
                           return std::string(kCases[std::get<0>(param_info.param)].name) + "_" +
                                  std::get<1>(param_info.param);
                         });

}  // namespace
}  // namespace sinter
