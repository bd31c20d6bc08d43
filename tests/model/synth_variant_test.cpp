// Named variants of an architecture's synthetic features: a preset carries its variant, --variant
// applies one to other dimensions, and a variant the architecture's presets do not name is an
// error. DeepSeek-V2-Lite's variant (no query compression, softmax routing, no groups) against
// the default DeepSeek-V3 features.
#include <gtest/gtest.h>

#include "gguf/metadata.h"
#include "model/registry.h"
#include "model/synth.h"

namespace sinter {
namespace {

Metadata deepseek2_keys(const SynthDims& dims) {
  Metadata out;
  const Status status = find_architecture("deepseek2")->write_synth_hparams(dims, out);
  EXPECT_TRUE(status.ok()) << status.error().message();
  return out;
}

uint32_t u32(const Metadata& md, const char* key) {
  auto value = md.get<uint32_t>(key);
  EXPECT_TRUE(value.ok()) << key;
  return value.ok() ? *value : 0;
}

TEST(SynthVariant, APresetCarriesItsVariant) {
  SynthOptions options;
  options.architecture = "deepseek2";
  options.preset = "v2-lite";
  auto dims = resolve_synth_dims(options);
  ASSERT_TRUE(dims.ok()) << dims.error().message();
  EXPECT_EQ(dims->variant, "v2-lite");
  // DeepSeek-V2-Lite's attention: 128 + 64 rotated key dimensions, 128 for values, a latent of 512.
  const Metadata md = deepseek2_keys(*dims);
  EXPECT_EQ(u32(md, "deepseek2.attention.q_lora_rank"), 0u);
  EXPECT_EQ(u32(md, "deepseek2.attention.kv_lora_rank"), 512u);
  EXPECT_EQ(u32(md, "deepseek2.attention.key_length_mla"), 192u);
  EXPECT_EQ(u32(md, "deepseek2.attention.value_length_mla"), 128u);
  EXPECT_EQ(u32(md, "deepseek2.rope.dimension_count"), 64u);
  EXPECT_EQ(u32(md, "deepseek2.expert_gating_func"), 1u);  // softmax
}

TEST(SynthVariant, TheOptionAppliesAVariantToOtherDimensions) {
  SynthOptions options;
  options.architecture = "deepseek2";
  options.preset = "small";
  auto v3 = resolve_synth_dims(options);
  ASSERT_TRUE(v3.ok()) << v3.error().message();
  EXPECT_EQ(v3->variant, "");
  const Metadata v3_keys = deepseek2_keys(*v3);
  EXPECT_GT(u32(v3_keys, "deepseek2.attention.q_lora_rank"), 0u);
  EXPECT_EQ(u32(v3_keys, "deepseek2.expert_gating_func"), 2u);  // sigmoid
  EXPECT_EQ(u32(v3_keys, "deepseek2.expert_group_count"), 4u);

  options.dims.variant = "v2-lite";
  auto lite = resolve_synth_dims(options);
  ASSERT_TRUE(lite.ok()) << lite.error().message();
  EXPECT_EQ(lite->n_embd, v3->n_embd);
  const Metadata lite_keys = deepseek2_keys(*lite);
  EXPECT_EQ(u32(lite_keys, "deepseek2.attention.q_lora_rank"), 0u);
  EXPECT_EQ(u32(lite_keys, "deepseek2.expert_gating_func"), 1u);
  EXPECT_EQ(u32(lite_keys, "deepseek2.expert_group_count"), 0u);
  // The Lite proportions of the small preset's head size (256 / 8 = 32).
  EXPECT_EQ(u32(lite_keys, "deepseek2.attention.key_length_mla"), 48u);
  EXPECT_EQ(u32(lite_keys, "deepseek2.attention.kv_lora_rank"), 128u);
}

TEST(SynthVariant, AnUnknownVariantIsAnError) {
  SynthOptions options;
  options.architecture = "deepseek2";
  options.preset = "small";
  options.dims.variant = "v3";
  auto dims = resolve_synth_dims(options);
  ASSERT_FALSE(dims.ok());
  EXPECT_NE(dims.error().message().find("unknown variant 'v3' for deepseek2 (v2-lite)"), std::string::npos)
      << dims.error().message();

  options.architecture = "llama";
  options.preset = "tiny";
  options.dims.variant = "v2-lite";
  dims = resolve_synth_dims(options);
  ASSERT_FALSE(dims.ok());
  EXPECT_NE(dims.error().message().find("it has none"), std::string::npos) << dims.error().message();
}

}  // namespace
}  // namespace sinter
