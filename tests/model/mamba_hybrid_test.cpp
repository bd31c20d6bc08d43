// The files of hybrids with Mamba layers, read as llama.cpp reads them. Falcon-H1: every block is
// both a KV layer and a recurrent layer; its FFN norm is named without ".weight"; its Mamba
// norm is optional; its heads may be sized apart from n_embd / n_head. Jamba: head_count_kv per
// layer says which blocks are attention (without RoPE), and a block has experts where the file
// has its router.
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

bool has_tensor(const std::string& path, const std::string& name) {
  auto file = GgufFile::open(path);
  return file.ok() && file->find_tensor(name) != nullptr;
}

TEST(FalconH1, EveryBlockIsBothAKvLayerAndARecurrentLayer) {
  const std::string path = synth_tiny("falcon-h1");
  EXPECT_TRUE(has_tensor(path, "blk.0.ffn_norm"));  // as llama.cpp's converter names it
  EXPECT_FALSE(has_tensor(path, "blk.0.ffn_norm.weight"));
  EXPECT_TRUE(has_tensor(path, "blk.0.ssm_norm.weight"));
  auto model = bind_model(path, "falcon-h1");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const ModelShape& shape = (*model)->shape();
  EXPECT_EQ(shape.n_layer, 2);
  ASSERT_EQ(shape.kv_layers.size(), 2u);
  ASSERT_EQ(shape.recurrent_layers.size(), 2u);
  EXPECT_EQ(shape.kv_layers[0].k_row, 2 * 32);  // 2 KV heads of 2·n_embd / n_head
  EXPECT_TRUE(shape.kv_rope[0].rotated);
  EXPECT_TRUE(shape.kv_rope[0].params.neox);
  // Mamba-2's convolution over x, B and C (96 + 2·2·16 channels) and its scan state.
  EXPECT_EQ(shape.recurrent_layers[0].states[0].ne[1], 96 + 2 * 2 * 16);
}

TEST(FalconH1, TheMambaNormIsOptional) {
  const std::string path = rewrite_gguf(
      synth_tiny("falcon-h1"), "falcon-h1-no-ssm-norm", [](Metadata&) {},
      [](const std::string& name, std::vector<int64_t>&) { return !name.ends_with(".ssm_norm.weight"); });
  auto model = bind_model(path, "falcon-h1");
  EXPECT_TRUE(model.ok()) << model.error().message();
}

// Falcon-H1-1.5B-Deep has 6 heads of 64 beside an n_embd of 1280: key_length and value_length
// size the heads, and n_embd need not divide by the head count. Here 3 heads of 32 (and a KV
// head) beside an n_embd of 64.
TEST(FalconH1, HeadsAreSizedByTheirKeysNotByNEmbd) {
  const auto edit = [](Metadata& m) {
    m.set("falcon-h1.attention.head_count", GgufValue::of_u32(3));
    m.set("falcon-h1.attention.head_count_kv", GgufValue::of_u32(1));
    m.set("falcon-h1.attention.key_length", GgufValue::of_u32(32));
    m.set("falcon-h1.attention.value_length", GgufValue::of_u32(32));
    m.set("falcon-h1.rope.dimension_count", GgufValue::of_u32(32));
  };
  const auto heads = [](const std::string& name, std::vector<int64_t>& shape) {
    if (name.ends_with(".attn_q.weight")) shape = {64, 3 * 32};
    if (name.ends_with(".attn_k.weight") || name.ends_with(".attn_v.weight")) shape = {64, 32};
    if (name.ends_with(".attn_output.weight")) shape = {3 * 32, 64};
    return true;
  };
  auto model =
      bind_model(rewrite_gguf(synth_tiny("falcon-h1"), "falcon-h1-three-heads", edit, heads), "falcon-h1");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ((*model)->shape().kv_layers[0].k_row, 32);

  // Without the keys, the default head size n_embd / n_head must be whole.
  const auto unsized = [&edit](Metadata& m) {
    edit(m);
    m.erase("falcon-h1.attention.key_length");
  };
  auto refused =
      bind_model(rewrite_gguf(synth_tiny("falcon-h1"), "falcon-h1-unsized", unsized, heads), "falcon-h1");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("not divisible by 3 heads"), std::string::npos)
      << refused.error().message();
}

TEST(Jamba, PerLayerHeadsPickAttentionAndTheFilePicksTheExperts) {
  const std::string path = synth_tiny("jamba");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  auto heads = file->metadata().get<std::vector<uint32_t>>("jamba.attention.head_count_kv");
  ASSERT_TRUE(heads.ok()) << heads.error().message();
  EXPECT_EQ(*heads, (std::vector<uint32_t>{0, 0, 2, 0}));
  for (int il : {1, 3}) EXPECT_NE(file->find_tensor(format_name("blk.%d.ffn_gate_inp.weight", il)), nullptr);
  for (int il : {0, 2}) EXPECT_NE(file->find_tensor(format_name("blk.%d.ffn_gate.weight", il)), nullptr);
  EXPECT_NE(file->find_tensor("blk.0.ssm_dt_norm.weight"), nullptr);  // Jamba's weighted norms
  auto model = bind_model(path, "jamba");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const ModelShape& shape = (*model)->shape();
  ASSERT_EQ(shape.kv_layers.size(), 1u);  // block 2
  EXPECT_FALSE(shape.kv_rope[0].rotated);
  EXPECT_EQ(shape.recurrent_layers.size(), 3u);  // blocks 0, 1 and 3

  // Without its router and experts, block 1 is read as a dense block: the file is then refused
  // for lacking the dense FFN, by name.
  const auto dense = [](const std::string& name, std::vector<int64_t>&) {
    if (!name.starts_with("blk.1.")) return true;
    if (name.find("_exps.") != std::string::npos || name.ends_with("ffn_gate_inp.weight")) return false;
    return true;
  };
  auto dense_file = rewrite_gguf(
      path, "jamba-dense-block-1", [](Metadata&) {}, dense);
  auto refused = bind_model(dense_file, "jamba");  // blk.1 has neither experts nor a dense FFN
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("blk.1.ffn_gate.weight"), std::string::npos)
      << refused.error().message();
}

}  // namespace
}  // namespace sinter
