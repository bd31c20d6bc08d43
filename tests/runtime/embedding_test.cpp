// Embeddings (runtime/embedding.h): pooling and normalization against hand-computed values, and
// a BERT input's vector independent of the other inputs of its batch, bit for bit: packing,
// order, pooling and the thread count change nothing.
#include "runtime/embedding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "runtime/runtime_test_support.h"
#include "sinter/engine.h"

namespace sinter {
namespace {

TEST(Pooling, MeanClsLastNone) {
  const std::vector<float> rows = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // 3 tokens of 3 values
  EXPECT_EQ(*pool_hidden_states(rows, 3, Pooling::kMean), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(*pool_hidden_states(rows, 3, Pooling::kCls), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(*pool_hidden_states(rows, 3, Pooling::kLast), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(*pool_hidden_states(rows, 3, Pooling::kNone), rows);
}

TEST(Pooling, RankTakesTheFirstRowAndPartialRowsAreRefused) {
  // A reranker's rows are its head's outputs already (runtime/rerank.h).
  EXPECT_EQ(*pool_hidden_states(std::vector<float>{1, 2, 3, 4}, 2, Pooling::kRank),
            (std::vector<float>{1, 2}));
  EXPECT_FALSE(pool_hidden_states(std::vector<float>{1, 2}, 3, Pooling::kMean));
  EXPECT_FALSE(pool_hidden_states({}, 3, Pooling::kMean));
}

TEST(Pooling, Names) {
  for (Pooling p : {Pooling::kNone, Pooling::kMean, Pooling::kCls, Pooling::kLast, Pooling::kRank})
    EXPECT_EQ(pooling_from_name(pooling_name(p)), p);
  EXPECT_FALSE(pooling_from_name("max"));
}

std::vector<float> normalized(std::vector<float> v, int32_t norm) {
  normalize_embedding(v, norm);
  return v;
}

TEST(Normalize, LlamaServerRules) {
  const std::vector<float> v = {3, -4};
  EXPECT_EQ(normalized(v, kNormalizeNone), v);
  const auto l2 = normalized(v, kNormalizeEuclidean);
  EXPECT_FLOAT_EQ(l2[0], 0.6f);
  EXPECT_FLOAT_EQ(l2[1], -0.8f);
  const auto taxicab = normalized(v, 1);
  EXPECT_FLOAT_EQ(taxicab[0], 3.0f / 7.0f);
  EXPECT_FLOAT_EQ(taxicab[1], -4.0f / 7.0f);
  const auto max_abs = normalized(v, kNormalizeMaxAbs);  // the largest |value| becomes 32760
  EXPECT_FLOAT_EQ(max_abs[0], 3.0f * 32760.0f / 4.0f);
  EXPECT_FLOAT_EQ(max_abs[1], -32760.0f);
  const auto p3 = normalized(v, 3);
  const double n3 = std::cbrt(27.0 + 64.0);
  EXPECT_NEAR(p3[0], 3.0 / n3, 1e-6);
  EXPECT_NEAR(p3[1], -4.0 / n3, 1e-6);
  EXPECT_EQ(normalized({0, 0}, kNormalizeEuclidean), (std::vector<float>{0, 0}));
  EXPECT_TRUE(check_normalization(-1));
  EXPECT_FALSE(check_normalization(-2));
}

// A tiny BERT (synthetic vocabulary: any id below 512 is a token), mean pooling from the file.
const std::string& tiny_bert(Pooling pooling) {
  static std::map<Pooling, std::string> made;
  auto [it, fresh] = made.emplace(pooling, "");
  if (fresh) {
    it->second = testing::scratch_dir() + "/../tiny-bert-" + std::string(pooling_name(pooling)) + ".gguf";
    SynthOptions options;
    options.architecture = "bert";
    options.seed = 11;
    options.dims.pooling_type = static_cast<int32_t>(pooling);
    auto status = synthesize(options, it->second);
    EXPECT_TRUE(status) << status.error().message();
  }
  return it->second;
}

std::unique_ptr<Context> embedding_context(const std::string& path, int threads = 1) {
  auto loaded = LoadedModel::load(path, LoadOptions{"cpu", threads});
  EXPECT_TRUE(loaded) << loaded.error().message();
  auto context = Context::create(*loaded, embedding_context_options((*loaded)->model().shape()));
  EXPECT_TRUE(context) << context.error().message();
  return std::move(context).value();
}

std::vector<TokenId> input(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 37 + salt * 101) % 500));
  return ids;
}

TEST(Embedding, BertShapeIsAnEncoder) {
  auto context = embedding_context(tiny_bert(Pooling::kMean));
  const ModelShape& shape = context->model().model().shape();
  EXPECT_TRUE(shape.encoder);
  EXPECT_FALSE(shape.causal);
  EXPECT_EQ(shape.pooling, Pooling::kMean);
  EXPECT_EQ(context->output_width(), shape.n_embd);
  auto vector = embed(*context, input(9, 1));
  ASSERT_TRUE(vector) << vector.error().message();
  EXPECT_EQ(vector->size(), static_cast<size_t>(shape.n_embd));
  EXPECT_EQ(context->cache().used_cells(), 0);
}

// Every token sees every token of its input: changing the last token changes the first row.
TEST(Embedding, AttentionIsNotCausal) {
  auto context = embedding_context(tiny_bert(Pooling::kCls));
  std::vector<TokenId> a = input(6, 2), b = a;
  b.back() = b.back() == 7 ? 8 : 7;
  auto first_a = embed(*context, a), first_b = embed(*context, b);
  ASSERT_TRUE(first_a && first_b);
  EXPECT_NE(*first_a, *first_b);
}

TEST(Embedding, BatchIndependentBitForBit) {
  for (Pooling pooling : {Pooling::kMean, Pooling::kCls, Pooling::kLast, Pooling::kNone}) {
    SCOPED_TRACE(std::string(pooling_name(pooling)));
    auto context = embedding_context(tiny_bert(pooling));
    std::vector<std::vector<TokenId>> inputs;
    for (int i = 0; i < 12; ++i) inputs.push_back(input(1 + (i * 29) % 70, i));
    const EmbedOptions options{.normalize = kNormalizeEuclidean};
    std::vector<std::vector<float>> alone;
    for (const auto& one : inputs) {
      auto v = embed(*context, one, options);
      ASSERT_TRUE(v) << v.error().message();
      alone.push_back(std::move(v).value());
    }
    auto together = embed_batch(*context, inputs, options);
    ASSERT_TRUE(together) << together.error().message();
    EXPECT_EQ(*together, alone);
    // At most 1 and 5 inputs per pass: the passes change, the vectors do not.
    for (int32_t per_pass : {1, 5}) {
      EmbedOptions limited = options;
      limited.max_inputs_per_pass = per_pass;
      auto passes = embed_batch(*context, inputs, limited);
      ASSERT_TRUE(passes) << passes.error().message();
      EXPECT_EQ(*passes, alone) << per_pass;
    }
    // Reversed order, and on two threads.
    std::vector<std::vector<TokenId>> reversed(inputs.rbegin(), inputs.rend());
    auto threaded = embedding_context(tiny_bert(pooling), 2);
    auto backwards = embed_batch(*threaded, reversed, options);
    ASSERT_TRUE(backwards) << backwards.error().message();
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ((*backwards)[inputs.size() - 1 - i], alone[i]) << i;
  }
}

// The other encoders' own attention (ALiBi, symmetric windows, RoPE) and pooled projections keep
// an input's vector independent of its batch too.
TEST(Embedding, EveryEncoderIsBatchIndependentBitForBit) {
  for (const char* architecture : {"nomic-bert", "jina-bert-v2", "gemma-embedding", "modern-bert"}) {
    SCOPED_TRACE(architecture);
    const std::string path = testing::scratch_dir() + "/../tiny-" + architecture + ".gguf";
    SynthOptions synth;
    synth.architecture = architecture;
    synth.seed = 11;
    synth.dims.pooling_type = static_cast<int32_t>(Pooling::kMean);
    auto status = synthesize(synth, path);
    ASSERT_TRUE(status) << status.error().message();
    auto context = embedding_context(path);
    std::vector<std::vector<TokenId>> inputs;
    for (int i = 0; i < 10; ++i) inputs.push_back(input(1 + (i * 29) % 70, i));
    std::vector<std::vector<float>> alone;
    for (const auto& one : inputs) {
      auto v = embed(*context, one);
      ASSERT_TRUE(v) << v.error().message();
      alone.push_back(std::move(v).value());
    }
    std::vector<std::vector<TokenId>> reversed(inputs.rbegin(), inputs.rend());
    auto together = embed_batch(*embedding_context(path, 2), reversed);
    ASSERT_TRUE(together) << together.error().message();
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ((*together)[inputs.size() - 1 - i], alone[i]) << i;
  }
}

// Inputs beyond one pass go into several: still the same vectors.
TEST(Embedding, ManyPassesGiveTheSameVectors) {
  auto loaded = LoadedModel::load(tiny_bert(Pooling::kMean), LoadOptions{"cpu", 1});
  ASSERT_TRUE(loaded);
  auto context = Context::create(*loaded, embedding_context_options((*loaded)->model().shape(), 64));
  ASSERT_TRUE(context);
  std::vector<std::vector<TokenId>> inputs;
  for (int i = 0; i < 70; ++i) inputs.push_back(input(1 + i % 40, i));  // > 64 inputs, > 64 tokens
  auto together = embed_batch(**context, inputs);
  ASSERT_TRUE(together) << together.error().message();
  for (size_t i = 0; i < inputs.size(); i += 13) {
    auto alone = embed(**context, inputs[i]);
    ASSERT_TRUE(alone);
    EXPECT_EQ((*together)[i], *alone) << i;
  }
  // One input longer than a pass is an error naming it.
  inputs[3] = input(65, 3);
  auto refused = embed_batch(**context, inputs);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("input 3 has 65 tokens"), std::string::npos)
      << refused.error().message();
}

TEST(Embedding, RefusesDecodersAndGenerationRefusesEncoders) {
  auto loaded = LoadedModel::load(testing::tiny_llama());
  ASSERT_TRUE(loaded);
  auto context = Context::create(*loaded, ContextOptions{});
  ASSERT_TRUE(context);
  EXPECT_FALSE(embed(**context, input(4, 0)));
  auto engine = Engine::load(tiny_bert(Pooling::kMean));
  ASSERT_FALSE(engine);
  EXPECT_NE(engine.error().message().find("sinter embed"), std::string::npos) << engine.error().message();
}

}  // namespace
}  // namespace sinter
