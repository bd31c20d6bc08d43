// Qwen 3.5's files, read as llama.cpp reads them: full_attention_interval says which blocks are
// attention; the delta nets' sizes come from the ssm.* keys; the RoPE sections must rotate every
// pair for text; Qwen 3.5 MoE's shared expert has a gate, and its files may lack
// feed_forward_length; Qwen3-Next fuses the beta and alpha projections and has no sections.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "gguf/gguf_file.h"
#include "model/registry.h"
#include "support/model_files.h"

namespace sinter {
namespace {

using testing::bind_model;
using testing::rewrite_gguf;
using testing::synth_tiny;

TEST(Qwen35, EveryFourthBlockIsAttentionTheOthersDeltaNets) {
  const std::string path = synth_tiny("qwen35");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  const Metadata& md = file->metadata();
  EXPECT_EQ(md.get<uint32_t>("qwen35.full_attention_interval").value(), 4u);
  EXPECT_EQ(md.get<std::vector<int32_t>>("qwen35.rope.dimension_sections").value(),
            (std::vector<int32_t>{1, 1, 0, 0}));  // 2 rotary pairs: heads of 16, a quarter rotated
  EXPECT_NE(file->find_tensor("blk.0.attn_qkv.weight"), nullptr);
  EXPECT_NE(file->find_tensor("blk.0.ssm_a"), nullptr);
  EXPECT_NE(file->find_tensor("blk.3.attn_q.weight"), nullptr);
  EXPECT_EQ(file->find_tensor("blk.3.attn_qkv.weight"), nullptr);
  // The query projection is twice as wide as the queries: a gate per query value.
  EXPECT_EQ(file->find_tensor("blk.3.attn_q.weight")->shape, (std::vector<int64_t>{64, 2 * 4 * 16}));

  auto model = bind_model(path, "qwen35");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const ModelShape& shape = (*model)->shape();
  EXPECT_EQ(shape.n_layer, 4);
  ASSERT_EQ(shape.kv_layers.size(), 1u);
  ASSERT_EQ(shape.recurrent_layers.size(), 3u);
  EXPECT_TRUE(shape.kv_rope[0].rotated);
  EXPECT_TRUE(shape.kv_rope[0].params.neox);
  EXPECT_EQ(shape.kv_rope[0].params.n_rot, 4);
  // Delta nets of 2 key heads and 4 value heads of 16: the convolution over q, k and v
  // (2·32 + 64 channels, the last 3 inputs) and S [d_v, d_k, H].
  const RecurrentLayerShape& layer = shape.recurrent_layers[0];
  ASSERT_EQ(layer.states.size(), 2u);
  EXPECT_EQ(layer.states[0].ne, (std::array<int64_t, 3>{3, 128, 1}));
  EXPECT_EQ(layer.states[1].ne, (std::array<int64_t, 3>{16, 16, 4}));
}

TEST(Qwen35, TheIntervalDecidesWhichBlocksAreAttention) {
  // Every second block attention: block 1 must then have attention weights, which it has not.
  const auto refused = bind_model(
      rewrite_gguf(synth_tiny("qwen35"), "qwen35-interval-2",
                   [](Metadata& m) { m.set("qwen35.full_attention_interval", GgufValue::of_u32(2)); }),
      "qwen35");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("blk.1.attn_q.weight"), std::string::npos)
      << refused.error().message();
}

TEST(Qwen35, SectionsMustRotateEveryPairForText) {
  // Three sections, as a converter writes Qwen's [11, 11, 10] when the checkpoint gives them:
  // read as [1, 1, 0, 0].
  EXPECT_TRUE(
      bind_model(rewrite_gguf(synth_tiny("qwen35"), "qwen35-three-sections",
                              [](Metadata& m) {
                                m.set("qwen35.rope.dimension_sections", GgufValue::of_i32s({1, 1, 0}));
                              }),
                 "qwen35")
          .ok());
  // [0, 0, 1]: pair 0 falls in no section for text tokens (llama.cpp leaves it unrotated).
  const auto refused =
      bind_model(rewrite_gguf(synth_tiny("qwen35"), "qwen35-unrotated",
                              [](Metadata& m) {
                                m.set("qwen35.rope.dimension_sections", GgufValue::of_i32s({0, 0, 1, 0}));
                              }),
                 "qwen35");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("unrotated"), std::string::npos) << refused.error().message();
  // More than four sections.
  EXPECT_FALSE(
      bind_model(rewrite_gguf(synth_tiny("qwen35"), "qwen35-five-sections",
                              [](Metadata& m) {
                                m.set("qwen35.rope.dimension_sections", GgufValue::of_i32s({1, 1, 0, 0, 0}));
                              }),
                 "qwen35")
          .ok());
}

TEST(Qwen35, RefusesWhatItCannotRun) {
  // Key heads of another size than value heads.
  auto unequal =
      bind_model(rewrite_gguf(synth_tiny("qwen35"), "qwen35-unequal-heads",
                              [](Metadata& m) { m.set("qwen35.ssm.state_size", GgufValue::of_u32(8)); }),
                 "qwen35");
  ASSERT_FALSE(unequal.ok());
  EXPECT_NE(unequal.error().message().find("ssm.state_size"), std::string::npos) << unequal.error().message();
  // A per-layer list of the recurrent layers, which sinter does not read.
  auto listed =
      bind_model(rewrite_gguf(synth_tiny("qwen35"), "qwen35-recurrent-layers",
                              [](Metadata& m) {
                                m.set("qwen35.attention.recurrent_layers", GgufValue::of_i32s({1, 1, 1, 0}));
                              }),
                 "qwen35");
  ASSERT_FALSE(listed.ok());
  EXPECT_NE(listed.error().message().find("recurrent_layers"), std::string::npos) << listed.error().message();
}

TEST(Qwen35Moe, SharedExpertHasAGateAndTheDenseLengthIsOptional) {
  const std::string path = synth_tiny("qwen35moe");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->find_tensor("blk.0.ffn_gate_inp_shexp.weight")->shape, (std::vector<int64_t>{64}));
  EXPECT_NE(file->find_tensor("blk.0.ffn_up_shexp.weight"), nullptr);
  EXPECT_NE(file->find_tensor("blk.3.ffn_down_exps.weight"), nullptr);
  EXPECT_TRUE(bind_model(path, "qwen35moe").ok());
  // Without feed_forward_length: the experts' and the shared expert's lengths are their own keys.
  const auto no_dense = bind_model(
      rewrite_gguf(path, "qwen35moe-no-ff", [](Metadata& m) { m.erase("qwen35moe.feed_forward_length"); }),
      "qwen35moe");
  EXPECT_TRUE(no_dense.ok()) << no_dense.error().message();
  // ... which then cannot be left out too.
  const auto none = bind_model(rewrite_gguf(synth_tiny("qwen35moe"), "qwen35moe-no-lengths",
                                            [](Metadata& m) {
                                              m.erase("qwen35moe.feed_forward_length");
                                              m.erase("qwen35moe.expert_feed_forward_length");
                                            }),
                               "qwen35moe");
  EXPECT_FALSE(none.ok());
}

TEST(Qwen3Next, FusesBetaAndAlphaAndRotatesWithoutSections) {
  const std::string path = synth_tiny("qwen3next");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->metadata().contains("qwen3next.rope.dimension_sections"));
  // Per key head (2), the beta rows of its 2 value heads, then their alpha rows.
  EXPECT_EQ(file->find_tensor("blk.0.ssm_ba.weight")->shape, (std::vector<int64_t>{64, 2 * 4}));
  EXPECT_EQ(file->find_tensor("blk.0.ssm_beta.weight"), nullptr);
  EXPECT_NE(file->find_tensor("blk.0.ffn_gate_inp_shexp.weight"), nullptr);
  auto model = bind_model(path, "qwen3next");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const ModelShape& shape = (*model)->shape();
  ASSERT_EQ(shape.kv_layers.size(), 1u);
  ASSERT_EQ(shape.recurrent_layers.size(), 3u);
  EXPECT_EQ(shape.kv_rope[0].params.n_rot, 4);
}

}  // namespace
}  // namespace sinter
