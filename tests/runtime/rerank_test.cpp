// Rerankers (runtime/rerank.h) and decoder embedding models: a BERT file with rank pooling and a
// classification head gives one score per pair, independent of the other pairs of its call bit
// for bit; pairs are joined as llama.cpp joins them; a Qwen3 file with a pooling type embeds
// with causal attention. Agreement with llama.cpp is tests/conformance/slow's.
#include "runtime/rerank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/registry.h"
#include "runtime/embedding.h"
#include "runtime/runtime_test_support.h"
#include "sinter/engine.h"

namespace sinter {
namespace {

std::string synth_file(const std::string& architecture, Pooling pooling) {
  const std::string path = testing::scratch_dir() + "/../rerank-" + architecture + "-" +
                           std::string(pooling_name(pooling)) + ".gguf";
  SynthOptions options;
  options.architecture = architecture;
  options.seed = 5;
  options.dims.pooling_type = static_cast<int32_t>(pooling);
  auto status = synthesize(options, path);
  EXPECT_TRUE(status) << status.error().message();
  return path;
}

std::unique_ptr<Context> context_for(const std::string& path, int threads = 1) {
  auto loaded = LoadedModel::load(path, LoadOptions{"cpu", threads});
  EXPECT_TRUE(loaded) << loaded.error().message();
  auto context = Context::create(*loaded, embedding_context_options((*loaded)->model().shape()));
  EXPECT_TRUE(context) << context.error().message();
  return std::move(context).value();
}

std::vector<TokenId> pair(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 41 + salt * 97) % 500));
  return ids;
}

TEST(Rerank, BertWithAHeadIsAReranker) {
  auto context = context_for(synth_file("bert", Pooling::kRank));
  const ModelShape& shape = context->model().model().shape();
  EXPECT_TRUE(check_reranker(shape));
  EXPECT_EQ(shape.n_rank_outputs, 1);
  EXPECT_EQ(context->output_width(), 1);
  // Its outputs are scores: no other pooling reads them.
  EXPECT_FALSE(embed(*context, pair(5, 1), {.pooling = Pooling::kMean}));
  auto embedder = context_for(synth_file("bert", Pooling::kMean));
  EXPECT_FALSE(check_reranker(embedder->model().model().shape()));
  EXPECT_FALSE(rerank_scores(*embedder, std::vector<std::vector<TokenId>>{pair(4, 0)}));
}

// A classifier's head has a row per label (cls.output.weight [n_embd, labels], as llama.cpp
// binds it by classifier.output_labels): every row comes out with rank pooling, and a reranker's
// score is the first. The file: the synthetic reranker with its one-row head widened to rows w,
// −w and w/2 (biases b, −b, b/2), so the outputs must be s, −s and s/2 of its score s.
TEST(Rerank, AClassifierHeadGivesEveryLabelAndRanksByTheFirst) {
  const std::string original = synth_file("bert", Pooling::kRank);
  auto file = GgufFile::open(original);
  ASSERT_TRUE(file) << file.error().message();
  GgufWriter writer;
  writer.metadata() = file->metadata();
  writer.metadata().set("bert.classifier.output_labels", GgufValue::of_strings({"yes", "no", "maybe"}));
  for (const GgufTensorInfo& t : file->tensors()) {
    std::vector<uint8_t> bytes(t.data, t.data + t.bytes);
    std::vector<int64_t> shape = t.shape;
    if (t.name == "cls.output.weight" || t.name == "cls.output.bias") {
      ASSERT_EQ(t.type, DType::F32);
      const size_t n = bytes.size() / sizeof(float);
      std::vector<float> row(n), widened;
      std::memcpy(row.data(), bytes.data(), bytes.size());
      for (const float factor : {1.0f, -1.0f, 0.5f}) {
        for (float v : row) widened.push_back(v * factor);
      }
      bytes.resize(widened.size() * sizeof(float));
      std::memcpy(bytes.data(), widened.data(), bytes.size());
      if (t.name == "cls.output.weight") {
        shape = {t.shape[0], 3};
      } else {
        shape = {3};
      }
    }
    ASSERT_TRUE(writer.add_tensor_bytes(t.name, t.type, shape, std::move(bytes)));
  }
  const std::string path = testing::scratch_dir() + "/../rerank-bert-three-labels.gguf";
  ASSERT_TRUE(writer.write(path));

  auto one = context_for(original);
  auto three = context_for(path);
  EXPECT_EQ(three->model().model().shape().n_rank_outputs, 3);
  const std::vector<std::vector<TokenId>> inputs = {pair(7, 1), pair(30, 2)};
  auto scores = rerank_scores(*one, inputs);
  auto outputs = embed_batch(*three, inputs, {.pooling = Pooling::kRank});
  auto first = rerank_scores(*three, inputs);
  ASSERT_TRUE(scores && outputs && first);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const float s = (*scores)[i];
    ASSERT_EQ((*outputs)[i].size(), 3u);
    EXPECT_FLOAT_EQ((*outputs)[i][0], s);
    EXPECT_FLOAT_EQ((*outputs)[i][1], -s);
    EXPECT_FLOAT_EQ((*outputs)[i][2], 0.5f * s);
    EXPECT_EQ((*first)[i], (*outputs)[i][0]);
  }
}

TEST(Rerank, ScoresAreBatchIndependentBitForBit) {
  const std::string path = synth_file("bert", Pooling::kRank);
  auto context = context_for(path);
  std::vector<std::vector<TokenId>> inputs;
  for (int i = 0; i < 9; ++i) inputs.push_back(pair(2 + (i * 23) % 60, i));
  std::vector<float> alone;
  for (const auto& one : inputs) {
    auto score = rerank_scores(*context, std::span<const std::vector<TokenId>>(&one, 1));
    ASSERT_TRUE(score) << score.error().message();
    ASSERT_EQ(score->size(), 1u);
    alone.push_back(score->front());
  }
  auto together = rerank_scores(*context, inputs);
  ASSERT_TRUE(together) << together.error().message();
  EXPECT_EQ(*together, alone);
  // Different pairs score differently (the head is not a constant).
  EXPECT_NE(alone[0], alone[1]);
  std::vector<std::vector<TokenId>> reversed(inputs.rbegin(), inputs.rend());
  auto threaded = context_for(path, 2);
  auto backwards = rerank_scores(*threaded, reversed);
  ASSERT_TRUE(backwards);
  for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ((*backwards)[inputs.size() - 1 - i], alone[i]) << i;
}

TEST(Rerank, ProbabilityIsTheSigmoid) {
  EXPECT_FLOAT_EQ(rerank_probability(0.0f), 0.5f);
  EXPECT_NEAR(rerank_probability(2.0f), 1.0 / (1.0 + std::exp(-2.0)), 1e-7);
  EXPECT_NEAR(rerank_probability(-30.0f), 0.0, 1e-12);
}

TEST(Rerank, PairsAreJoinedAsLlamaCppJoinsThem) {
  auto loaded = LoadedModel::load(testing::tiny_llama());
  ASSERT_TRUE(loaded);
  auto tokenizer = Tokenizer::from_metadata((*loaded)->file().metadata());
  ASSERT_TRUE(tokenizer);
  const SpecialTokens& special = (*tokenizer)->vocabulary().special();
  const EncodeOptions plain{.add_special = false, .parse_special = false};
  auto query = (*tokenizer)->encode("what is", plain), document = (*tokenizer)->encode("a fox", plain);
  ASSERT_TRUE(query && document);
  auto joined = rerank_tokens(**tokenizer, "what is", "a fox");
  ASSERT_TRUE(joined) << joined.error().message();
  // BOS query EOS SEP document EOS, each special only where the vocabulary has one.
  std::vector<TokenId> expected;
  if (special.bos != kNoToken) expected.push_back(special.bos);
  expected.insert(expected.end(), query->begin(), query->end());
  if (special.eos != kNoToken) expected.push_back(special.eos);
  if (special.separator != kNoToken) expected.push_back(special.separator);
  expected.insert(expected.end(), document->begin(), document->end());
  if (special.eos != kNoToken) expected.push_back(special.eos);
  EXPECT_EQ(*joined, expected);
  ASSERT_NE(special.eos, kNoToken);
  EXPECT_EQ(joined->back(), special.eos);
}

// A file's rerank prompt (tokenizer.chat_template.rerank) is read and checked for both
// placeholders.
TEST(Rerank, PromptTemplateComesFromTheFile) {
  Metadata metadata;
  auto none = rerank_prompt_template(metadata);
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_EQ(*none, "");
  metadata.set("tokenizer.chat_template.rerank", GgufValue::of_string("Q: {query}\nD: {document}"));
  auto prompt = rerank_prompt_template(metadata);
  ASSERT_TRUE(prompt) << prompt.error().message();
  EXPECT_EQ(*prompt, "Q: {query}\nD: {document}");
  metadata.set("tokenizer.chat_template.rerank", GgufValue::of_string("Q: {query} only"));
  auto lacking = rerank_prompt_template(metadata);
  ASSERT_FALSE(lacking);
  EXPECT_NE(lacking.error().message().find("{document}"), std::string::npos) << lacking.error().message();
}

// With a prompt, a pair is the prompt with its placeholders replaced (once, left to right),
// tokenized whole with special-token text parsed and nothing added, as llama-server forms it.
TEST(Rerank, PairsFollowTheFilesPrompt) {
  auto loaded = LoadedModel::load(testing::tiny_llama());
  ASSERT_TRUE(loaded);
  auto tokenizer = Tokenizer::from_metadata((*loaded)->file().metadata());
  ASSERT_TRUE(tokenizer);
  const SpecialTokens& special = (*tokenizer)->vocabulary().special();
  ASSERT_NE(special.bos, kNoToken);
  ASSERT_NE(special.eos, kNoToken);
  const std::string bos((*tokenizer)->vocabulary().text(special.bos));
  const std::string eos((*tokenizer)->vocabulary().text(special.eos));
  const std::string prompt = bos + "Query: {query}. Document: {document}." + eos;
  const EncodeOptions parsed{.add_special = false, .parse_special = true};
  auto joined = rerank_tokens(**tokenizer, "what is", "a fox", prompt);
  ASSERT_TRUE(joined) << joined.error().message();
  auto expected = (*tokenizer)->encode(bos + "Query: what is. Document: a fox." + eos, parsed);
  ASSERT_TRUE(expected);
  EXPECT_EQ(*joined, *expected);
  EXPECT_EQ(joined->front(), special.bos);  // the template's special text became the token
  EXPECT_EQ(joined->back(), special.eos);
  // A query that holds a placeholder's text is the query: it is not replaced again.
  auto literal = rerank_tokens(**tokenizer, "{document}", "a fox", prompt);
  auto literal_expected = (*tokenizer)->encode(bos + "Query: {document}. Document: a fox." + eos, parsed);
  ASSERT_TRUE(literal && literal_expected);
  EXPECT_EQ(*literal, *literal_expected);
}

// Qwen3-Reranker-shaped: the yes/no rows and a softmax at the last token; P(yes) is the score,
// a probability already.
TEST(Rerank, Qwen3ScoresAreProbabilities) {
  auto context = context_for(synth_file("qwen3", Pooling::kRank));
  const ModelShape& shape = context->model().model().shape();
  EXPECT_TRUE(check_reranker(shape));
  EXPECT_TRUE(shape.causal);
  EXPECT_TRUE(shape.rank_is_probability);
  EXPECT_EQ(shape.n_rank_outputs, 2);
  std::vector<std::vector<TokenId>> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(pair(3 + i * 7, i));
  auto scores = rerank_scores(*context, inputs);
  ASSERT_TRUE(scores) << scores.error().message();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const float score = (*scores)[i];
    EXPECT_GT(score, 0.0f);
    EXPECT_LT(score, 1.0f);
    EXPECT_EQ(rerank_probability(shape, score), score);
    auto alone = rerank_scores(*context, std::span<const std::vector<TokenId>>(&inputs[i], 1));
    ASSERT_TRUE(alone);
    EXPECT_EQ(alone->front(), score) << i;
  }
  // The two outputs are P(yes) and P(no).
  auto both = embed(*context, inputs[0]);
  ASSERT_TRUE(both);
  ASSERT_EQ(both->size(), 2u);
  EXPECT_NEAR((*both)[0] + (*both)[1], 1.0f, 1e-6);
}

// Qwen3-Embedding: a qwen3 file with pooling last embeds, with causal attention: the last
// token's vector depends on every token, the first token's on itself only.
TEST(DecoderEmbedding, Qwen3WithAPoolingTypeEmbedsCausally) {
  const std::string path = synth_file("qwen3", Pooling::kLast);
  auto context = context_for(path);
  const ModelShape& shape = context->model().model().shape();
  EXPECT_TRUE(shape.encoder);
  EXPECT_TRUE(shape.causal);
  EXPECT_EQ(shape.pooling, Pooling::kLast);
  EXPECT_EQ(context->output_width(), shape.n_embd);
  EXPECT_FALSE(check_generative(shape));
  std::vector<TokenId> a = pair(6, 2), b = a;
  b.back() = b.back() == 7 ? 8 : 7;
  auto last_a = embed(*context, a), last_b = embed(*context, b);
  auto first_a = embed(*context, a, {.pooling = Pooling::kCls});
  auto first_b = embed(*context, b, {.pooling = Pooling::kCls});
  ASSERT_TRUE(last_a && last_b && first_a && first_b);
  EXPECT_NE(*last_a, *last_b);
  EXPECT_EQ(*first_a, *first_b);
  // Batch independence, as for encoders.
  std::vector<std::vector<TokenId>> inputs;
  for (int i = 0; i < 7; ++i) inputs.push_back(pair(1 + (i * 19) % 40, i));
  auto together = embed_batch(*context, inputs);
  ASSERT_TRUE(together) << together.error().message();
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto alone = embed(*context, inputs[i]);
    ASSERT_TRUE(alone);
    EXPECT_EQ((*together)[i], *alone) << i;
  }
  // Without a pooling type the file is a generative model, as before.
  const std::string generative = testing::scratch_dir() + "/../rerank-qwen3-generative.gguf";
  SynthOptions options;
  options.architecture = "qwen3";
  ASSERT_TRUE(synthesize(options, generative));
  auto loaded = LoadedModel::load(generative);
  ASSERT_TRUE(loaded);
  EXPECT_FALSE((*loaded)->model().shape().encoder);
  EXPECT_TRUE(check_generative((*loaded)->model().shape()));
  // The header alone tells the two apart (the server decides by it before loading).
  EXPECT_FALSE(is_embedding_model_file((*loaded)->file().metadata()));
  EXPECT_TRUE(is_embedding_model_file(context->model().file().metadata()));
}

}  // namespace
}  // namespace sinter
