// Dense layers after pooling (runtime/pooled_projection.h): the products against hand-computed
// values, and EmbeddingGemma's dense_2 and dense_3 applied by embed() to each pooled vector
// (or each token's row with pooling none), after pooling and before normalization, the same in
// packed passes as alone.
#include "runtime/pooled_projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "runtime/embedding.h"
#include "runtime/runtime_test_support.h"

namespace sinter {
namespace {

// [2 → 3] then [3 → 2], rows [n_out][n_in].
PooledProjection two_layers() {
  return PooledProjection({{2, 3, {1, 0, 0, 1, 1, 1}}, {3, 2, {1, 2, 3, -1, 0, 1}}});
}

TEST(PooledProjection, LayersInOrder) {
  const PooledProjection projection = two_layers();
  EXPECT_EQ(projection.layer_count(), 2u);
  // (2, 5) → (2, 5, 7) → (2 + 10 + 21, −2 + 7)
  EXPECT_EQ(projection.apply(std::vector<float>{2, 5}), (std::vector<float>{33, 5}));
  // Each row of a token-major block.
  std::vector<float> rows = {2, 5, 1, 0};
  projection.apply_rows(rows, 2);
  EXPECT_EQ(rows, (std::vector<float>{33, 5, 4, 0}));  // (1, 0) → (1, 0, 1) → (4, 0)
  // A vector of another size gives nothing; an empty projection changes nothing.
  EXPECT_TRUE(projection.apply(std::vector<float>{1, 2, 3}).empty());
  EXPECT_EQ(PooledProjection().apply(std::vector<float>{1, 2, 3}), (std::vector<float>{1, 2, 3}));
}

const std::string& tiny_gemma_embedding(Pooling pooling) {
  static std::map<Pooling, std::string> made;
  auto [it, fresh] = made.emplace(pooling, "");
  if (fresh) {
    it->second =
        testing::scratch_dir() + "/../tiny-gemma-embedding-" + std::string(pooling_name(pooling)) + ".gguf";
    SynthOptions options;
    options.architecture = "gemma-embedding";
    options.seed = 5;
    options.dims.pooling_type = static_cast<int32_t>(pooling);
    auto status = synthesize(options, it->second);
    EXPECT_TRUE(status) << status.error().message();
  }
  return it->second;
}

struct Loaded {
  std::shared_ptr<LoadedModel> model;
  std::unique_ptr<Context> context;
};

Loaded load(const std::string& path) {
  auto model = LoadedModel::load(path, LoadOptions{"cpu", 1});
  EXPECT_TRUE(model) << model.error().message();
  auto context = Context::create(*model, embedding_context_options((*model)->model().shape()));
  EXPECT_TRUE(context) << context.error().message();
  return {std::move(model).value(), std::move(context).value()};
}

// 40 tokens: past the synthetic model's window of 16 (8 positions on either side).
std::vector<TokenId> input(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 37 + salt * 101) % 500));
  return ids;
}

TEST(PooledProjection, EmbeddingGemmaShape) {
  Loaded m = load(tiny_gemma_embedding(Pooling::kMean));
  const ModelShape& shape = m.model->model().shape();
  EXPECT_TRUE(shape.encoder);
  EXPECT_FALSE(shape.causal);
  EXPECT_EQ(shape.pooling, Pooling::kMean);
  EXPECT_EQ(shape.window_kind, WindowKind::kSymmetric);
  EXPECT_EQ(shape.kv_windows, (std::vector<int32_t>{16, 0}));  // period 2: windowed, then global
  ASSERT_EQ(shape.pooled_projection.size(), 2u);
  EXPECT_EQ(shape.pooled_projection[0]->name, "dense_2.weight");
  EXPECT_EQ(shape.pooled_projection[0]->ne[1], 4 * shape.n_embd);
  EXPECT_EQ(m.model->pooled_projection().layer_count(), 2u);
  EXPECT_EQ(m.context->cache().pool_window_kind(1), WindowKind::kSymmetric);
}

// embed() is the mean of the hidden states, then dense_2 and dense_3, then the normalization.
TEST(PooledProjection, AppliedAfterPoolingBeforeNormalization) {
  Loaded m = load(tiny_gemma_embedding(Pooling::kMean));
  const auto ids = input(40, 1);
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < ids.size(); ++i) batch.push_back({ids[i], static_cast<Position>(i), 0, true});
  ASSERT_TRUE(m.context->decode(batch));
  std::vector<float> rows;
  for (int32_t i = 0; i < m.context->output_count(); ++i) {
    const auto row = m.context->logits(i);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  m.context->cache().clear();
  const int32_t n_embd = m.context->output_width();
  const std::vector<float> mean = *pool_hidden_states(rows, n_embd, Pooling::kMean);
  std::vector<float> expected = m.model->pooled_projection().apply(mean);
  ASSERT_EQ(expected.size(), static_cast<size_t>(n_embd));
  EXPECT_NE(expected, mean);
  auto raw = embed(*m.context, ids);
  ASSERT_TRUE(raw) << raw.error().message();
  EXPECT_EQ(*raw, expected);
  normalize_embedding(expected, kNormalizeEuclidean);
  auto normalized = embed(*m.context, ids, {.normalize = kNormalizeEuclidean});
  ASSERT_TRUE(normalized);
  EXPECT_EQ(*normalized, expected);
}

// With pooling none every token's row goes through the projection: as the projection is
// linear, the mean of the rows is the mean pooling's vector (up to rounding).
TEST(PooledProjection, EachRowWithPoolingNone) {
  Loaded none = load(tiny_gemma_embedding(Pooling::kNone));
  Loaded mean = load(tiny_gemma_embedding(Pooling::kMean));
  const auto ids = input(30, 2);
  auto rows = embed(*none.context, ids);
  auto pooled = embed(*mean.context, ids);
  ASSERT_TRUE(rows && pooled);
  const auto n = static_cast<size_t>(none.context->output_width());
  ASSERT_EQ(rows->size(), ids.size() * n);
  for (size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (size_t t = 0; t < ids.size(); ++t) sum += (*rows)[t * n + i];
    EXPECT_NEAR(sum / static_cast<double>(ids.size()), (*pooled)[i], 1e-4) << i;
  }
}

// Inputs packed into one pass (each its own sequence, windows within it) get the vectors they
// get alone, bit for bit.
TEST(PooledProjection, PackedPassesGiveTheVectorsOfSingleInputs) {
  Loaded m = load(tiny_gemma_embedding(Pooling::kMean));
  std::vector<std::vector<TokenId>> inputs;
  for (int i = 0; i < 6; ++i) inputs.push_back(input(1 + (i * 23) % 60, i));
  auto together = embed_batch(*m.context, inputs);
  ASSERT_TRUE(together) << together.error().message();
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto alone = embed(*m.context, inputs[i]);
    ASSERT_TRUE(alone);
    EXPECT_EQ((*together)[i], *alone) << i;
  }
}

}  // namespace
}  // namespace sinter
