// Every registered architecture through the runtime, on random-weight files from `sinter synth`
// (each with every feature on: sliding windows of 16 positions, soft-caps, NoPE layers, LongRoPE
// factors): a sequence's logits do not depend on its batch, generation continues past the
// context with shifts, and windowed layers' memory stays constant as a sequence grows.
#include <cstring>
#include <map>

#include "model/registry.h"
#include "runtime/context.h"
#include "runtime/runtime_test_support.h"
#include "sinter/engine.h"

namespace sinter {
namespace {

const std::string& synth_model(const std::string& architecture) {
  static std::map<std::string, std::string> made;
  auto [it, fresh] = made.emplace(architecture, "");
  if (fresh) {
    it->second = testing::scratch_dir() + "/../arch-" + architecture + ".gguf";
    SynthOptions options;
    options.architecture = architecture;
    options.preset = "tiny";
    options.seed = 5;
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

// Logits of every position of `ids` in sequence 0, fed in passes of `chunk` tokens, with
// `others` interleaved into the same passes as sequences 1, 2, ...
std::vector<std::vector<float>> run(Context& context, const std::vector<TokenId>& ids, int chunk,
                                    const std::vector<std::vector<TokenId>>& others = {}) {
  context.memory().clear();
  std::vector<std::vector<float>> logits;
  for (size_t start = 0; start < ids.size(); start += static_cast<size_t>(chunk)) {
    std::vector<BatchEntry> batch;
    const size_t end = std::min(ids.size(), start + static_cast<size_t>(chunk));
    for (size_t i = start; i < end; ++i) {
      for (size_t o = 0; o < others.size(); ++o) {
        if (i < others[o].size())
          batch.push_back({others[o][i], static_cast<Position>(i), static_cast<SequenceId>(o + 1), true});
      }
      batch.push_back({ids[i], static_cast<Position>(i), 0, true});
    }
    EXPECT_TRUE(context.decode(batch));
    for (int k = 0; k < context.output_count(); ++k) {
      if (batch[static_cast<size_t>(k)].sequence == 0) {
        const auto l = context.logits(k);
        logits.emplace_back(l.begin(), l.end());
      }
    }
  }
  return logits;
}

bool identical(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

class Architectures : public ::testing::TestWithParam<std::string> {};

TEST_P(Architectures, LogitsDoNotDependOnTheBatch) {
  auto model = LoadedModel::load(synth_model(GetParam()), LoadOptions{"cpu", 2});
  ASSERT_TRUE(model) << model.error().message();
  ContextOptions options;
  options.n_ctx = 256;
  options.n_seq_max = 3;
  auto context = Context::create(*model, options);
  ASSERT_TRUE(context) << context.error().message();
  const auto ids = prompt_tokens(48, 0);  // crosses the synthetic models' 16-position windows
  const auto one_batch = run(**context, ids, 48);
  ASSERT_EQ(one_batch.size(), 48u);
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 7)));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 1)));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 48, {prompt_tokens(48, 1), prompt_tokens(25, 2)})));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 5, {prompt_tokens(33, 3), prompt_tokens(48, 4)})));
  EXPECT_FALSE(identical(one_batch, run(**context, prompt_tokens(48, 9), 48)));
}

// Whether the architecture's model has attention layers (recurrent ones alone have no context
// to shift, nor keys).
bool has_kv_layers(const std::string& architecture) {
  auto model = LoadedModel::load(synth_model(architecture), LoadOptions{"cpu", 1});
  return model && !(*model)->model().shape().kv_layers.empty();
}

TEST_P(Architectures, GenerationContinuesPastTheContextWithShifts) {
  const bool attention = has_kv_layers(GetParam());
  EngineOptions engine_options;
  engine_options.threads = 2;
  engine_options.n_ctx = 40;
  auto engine = Engine::load(synth_model(GetParam()), engine_options);
  ASSERT_TRUE(engine) << engine.error().message();
  GenerationOptions options;
  options.max_tokens = 100;
  options.sampling.temperature = 0.0f;
  options.overflow = OverflowPolicy::kShift;
  options.keep = 4;
  options.ignore_eos = true;
  auto result = (*engine)->generate_tokens(prompt_tokens(12, 6), options);
  ASSERT_TRUE(result) << result.error().message();
  if (!attention) {
    // Recurrent layers alone hold a sequence of any length: no context to fill, nothing to shift.
    EXPECT_EQ(result->tokens.size(), 100u);
    EXPECT_EQ(result->stop_reason, StopReason::kMaxTokens);
    EXPECT_EQ(result->context_shifts, 0);
    return;
  }
  if (!(*engine)->context().memory().can_shift()) {
    // Recurrent layers summarize every token: nothing can be shifted out, and the context ends
    // the generation (its 40 positions filled, then the token sampled after the last).
    EXPECT_EQ(result->stop_reason, StopReason::kContextFull);
    EXPECT_EQ(result->tokens.size(), 40u - 12u + 1u);
    EXPECT_EQ(result->context_shifts, 0);
    return;
  }
  EXPECT_EQ(result->tokens.size(), 100u);
  EXPECT_GT(result->context_shifts, 0);
  const KvCache& cache = (*engine)->context().cache();
  EXPECT_LE(cache.max_position(0), 39);
}

// Tokens decoded at positions 10..49 and shifted back by 10 give the next token the logits of a
// fresh pass over the same tokens at 0..39: attention with rotary embeddings sees relative
// positions, so a shift that rotates each layer's keys as its forward pass did (its own base,
// factors, NoPE layers untouched, windowed pools included) changes nothing but F16 rounding.
TEST_P(Architectures, ShiftedKeysGiveTheLogitsOfAFreshPass) {
  auto model = LoadedModel::load(synth_model(GetParam()), LoadOptions{"cpu", 2});
  ASSERT_TRUE(model) << model.error().message();
  ContextOptions options;
  options.n_ctx = 64;
  auto shifted = Context::create(*model, options);
  auto fresh = Context::create(*model, options);
  ASSERT_TRUE(shifted && fresh);
  // A recurrent state summarizes every token it has seen: such a memory cannot shift, and says
  // so (the runtime then stops at a full context instead).
  if (!(*model)->model().shape().recurrent_layers.empty()) {
    EXPECT_FALSE((*shifted)->memory().can_shift());
    return;
  }
  EXPECT_TRUE((*shifted)->memory().can_shift());
  const auto ids = prompt_tokens(41, 8);
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < 40; ++i) batch.push_back({ids[i], static_cast<Position>(i + 10), 0, false});
  ASSERT_TRUE((*shifted)->decode(batch));
  (*shifted)->cache().shift(0, 10, 50, -10);
  ASSERT_TRUE((*shifted)->decode(std::vector<BatchEntry>{{ids[40], 40, 0, true}}));
  for (auto& entry : batch) entry.position -= 10;
  batch.push_back({ids[40], 40, 0, true});
  ASSERT_TRUE((*fresh)->decode(batch));
  const auto got = (*shifted)->logits(0);
  const auto expected = (*fresh)->logits(0);
  float worst = 0.0f, spread = 0.0f;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - expected[i]));
    spread = std::max(spread, std::abs(expected[i] - expected[0]));
  }
  EXPECT_LT(worst, 1e-2f * std::max(1.0f, spread));
  // The same shift without rotating the keys gives other logits (the comparison can fail).
  auto unrotated = Context::create(*model, options);
  ASSERT_TRUE(unrotated);
  for (auto& entry : batch) entry.position += 10;
  batch.pop_back();
  ASSERT_TRUE((*unrotated)->decode(batch));
  (*unrotated)->cache().shift(0, 10, 50, -10);
  (*unrotated)->cache().clear_pending_shift();
  ASSERT_TRUE((*unrotated)->decode(std::vector<BatchEntry>{{ids[40], 40, 0, true}}));
  float moved = 0.0f;
  const auto other = (*unrotated)->logits(0);
  for (size_t i = 0; i < other.size(); ++i) moved = std::max(moved, std::abs(other[i] - expected[i]));
  EXPECT_GT(moved, 10 * worst);
}

TEST_P(Architectures, WindowedLayersKeepConstantMemoryAsASequenceGrows) {
  auto model = LoadedModel::load(synth_model(GetParam()), LoadOptions{"cpu", 2});
  ASSERT_TRUE(model) << model.error().message();
  const ModelShape& shape = (*model)->model().shape();
  if (shape.kv_layers.empty()) {
    // Recurrent layers alone: the whole memory keeps its size however long the sequence grows
    // (checkpoints off, so that only the state counts).
    ContextOptions options;
    options.state_checkpoint_bytes = 1;  // below one state: none kept
    auto context = Context::create(*model, options);
    ASSERT_TRUE(context) << context.error().message();
    const size_t before = (*context)->memory().bytes();
    const auto ids = prompt_tokens(200, 2);
    for (size_t start = 0; start < ids.size(); start += 50) {
      std::vector<BatchEntry> batch;
      for (size_t i = start; i < start + 50; ++i)
        batch.push_back({ids[i], static_cast<Position>(i), 0, false});
      batch.back().want_logits = true;
      ASSERT_TRUE((*context)->decode(batch));
      EXPECT_EQ((*context)->memory().bytes(), before) << "after " << start + 50 << " tokens";
    }
    EXPECT_EQ((*context)->memory().max_position(0), 199);
    return;
  }
  int32_t window = 0;
  for (int32_t w : shape.kv_windows) window = std::max(window, w);
  ContextOptions options;
  options.n_ctx = 512;
  options.n_batch = 8;
  auto context = Context::create(*model, options);
  ASSERT_TRUE(context) << context.error().message();
  const KvCache& cache = (*context)->cache();
  if (window == 0) {
    EXPECT_EQ(cache.pool_count(), 1) << "no windowed layers, one pool";
    return;
  }
  ASSERT_EQ(cache.pool_count(), 2);
  const int windowed = cache.pool_window(0) > 0 ? 0 : 1;
  const size_t bytes = cache.pool_bytes(windowed);
  const auto ids = prompt_tokens(400, 3);
  std::vector<int32_t> high_water;
  for (size_t start = 0; start < ids.size(); start += 8) {
    std::vector<BatchEntry> batch;
    for (size_t i = start; i < std::min(ids.size(), start + 8); ++i)
      batch.push_back({ids[i], static_cast<Position>(i), 0, i + 1 == ids.size()});
    ASSERT_TRUE((*context)->decode(batch));
    high_water.push_back(cache.pool_high_water(windowed));
  }
  // 400 positions, 25 windows: the windowed pool never holds more than window + one pass.
  EXPECT_LE(high_water.back(), window + 8);
  EXPECT_EQ(high_water.back(), high_water[high_water.size() / 2]);
  EXPECT_EQ(cache.pool_bytes(windowed), bytes);
  EXPECT_LE(cache.pool_used_cells(windowed), window + 8);
  EXPECT_EQ(cache.used_cells(), 400);
}

// The product's architectures (not the test-only ones other tests of this binary register).
std::vector<std::string> architectures() {
  std::vector<std::string> out;
  for (const std::string& name : architecture_names()) {
    // Encoders (embedding models) generate nothing: runtime/embedding_test.cpp tests them.
    if (!name.starts_with("test_") && !find_architecture(name)->encoder) out.push_back(name);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registered, Architectures, ::testing::ValuesIn(architectures()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace sinter
