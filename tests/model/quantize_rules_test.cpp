// The mixture table and the per-tensor rules, on facts stated in docs/QUANTIZE.md. The slow
// conformance test (tests/conformance/slow/quantize_mixture_rules_test.cpp) checks the same
// rules against llama.cpp's own quantizer on many model shapes.
#include <gtest/gtest.h>

#include <set>

#include "model/quantize/mixture.h"
#include "model/quantize/tensor_rules.h"

namespace sinter {
namespace {

TEST(QuantizeMixtures, NamesAliasesAndFileTypes) {
  EXPECT_EQ(mixture_from_name("Q4_K_M"), MixtureId::kQ4_K_M);
  EXPECT_EQ(mixture_from_name("q4_k_m"), MixtureId::kQ4_K_M);
  // llama-quantize's aliases
  EXPECT_EQ(mixture_from_name("Q3_K"), MixtureId::kQ3_K_M);
  EXPECT_EQ(mixture_from_name("q4_K"), MixtureId::kQ4_K_M);
  EXPECT_EQ(mixture_from_name("Q5_K"), MixtureId::kQ5_K_M);
  EXPECT_FALSE(mixture_from_name("Q9_0").has_value());
  EXPECT_FALSE(mixture_from_name("").has_value());
  EXPECT_FALSE(mixture_from_name("Q4_K_MX").has_value());
  // llama.cpp's llama_ftype numbers, as general.file_type
  const std::pair<const char*, uint32_t> file_types[] = {
      {"F32", 0},     {"F16", 1},     {"Q4_0", 2},    {"Q4_1", 3},    {"Q8_0", 7},
      {"Q5_0", 8},    {"Q5_1", 9},    {"Q2_K", 10},   {"Q3_K_S", 11}, {"Q3_K_M", 12},
      {"Q3_K_L", 13}, {"Q4_K_S", 14}, {"Q4_K_M", 15}, {"Q5_K_S", 16}, {"Q5_K_M", 17},
      {"Q6_K", 18},   {"IQ4_NL", 25}, {"IQ4_XS", 30}, {"BF16", 32},   {"MXFP4_MOE", 38},
  };
  for (const auto& [name, file_type] : file_types) {
    const auto id = mixture_from_name(name);
    ASSERT_TRUE(id.has_value()) << name;
    EXPECT_EQ(mixture(*id).file_type, file_type) << name;
    EXPECT_EQ(mixture(*id).name, name);
  }
  EXPECT_EQ(all_mixtures().size(), std::size(file_types));
  EXPECT_NE(mixture_names().find("Q4_K_M"), std::string::npos);
  EXPECT_NE(mixture_names().find("Q4_K (= Q4_K_M)"), std::string::npos);
}

TEST(QuantizeRules, RolesByName) {
  EXPECT_EQ(weight_role("output.weight"), WeightRole::kOutput);
  EXPECT_EQ(weight_role("token_embd.weight"), WeightRole::kTokenEmbedding);
  EXPECT_EQ(weight_role("blk.3.attn_v.weight"), WeightRole::kAttentionV);
  EXPECT_EQ(weight_role("blk.3.attn_qkv.weight"), WeightRole::kAttentionV);
  EXPECT_EQ(weight_role("blk.3.attn_kv_b.weight"), WeightRole::kAttentionV);
  EXPECT_EQ(weight_role("blk.3.attn_k.weight"), WeightRole::kAttentionK);
  EXPECT_EQ(weight_role("blk.3.attn_q.weight"), WeightRole::kAttentionQ);
  EXPECT_EQ(weight_role("blk.3.attn_output.weight"), WeightRole::kAttentionOutput);
  EXPECT_EQ(weight_role("blk.3.ffn_down.weight"), WeightRole::kFfnDown);
  EXPECT_EQ(weight_role("blk.3.ffn_down_exps.weight"), WeightRole::kFfnDown);
  EXPECT_EQ(weight_role("blk.3.ffn_up_shexp.weight"), WeightRole::kFfnUp);
  EXPECT_EQ(weight_role("blk.3.ffn_gate.weight"), WeightRole::kFfnGate);
  EXPECT_EQ(weight_role("blk.3.attn_norm.weight"), WeightRole::kOther);
  EXPECT_EQ(weight_role("output_norm.weight"), WeightRole::kOther);
}

TEST(QuantizeRules, WhichTensorsAreQuantized) {
  const std::vector<int64_t> matrix = {256, 256};
  EXPECT_TRUE(tensor_is_quantizable("blk.0.attn_q.weight", matrix));
  EXPECT_TRUE(tensor_is_quantizable("blk.0.ffn_down_exps.weight", std::vector<int64_t>{256, 256, 8}));
  // vectors, also when stored with a trailing dimension of 1
  EXPECT_FALSE(tensor_is_quantizable("blk.0.attn_q.weight", std::vector<int64_t>{256}));
  EXPECT_FALSE(tensor_is_quantizable("blk.0.attn_q.weight", std::vector<int64_t>{256, 1}));
  EXPECT_TRUE(tensor_is_quantizable("blk.0.attn_q.weight", std::vector<int64_t>{256, 1, 2}));
  // not a weight, or one llama.cpp keeps as it is
  EXPECT_FALSE(tensor_is_quantizable("blk.0.attn_q.bias", matrix));
  EXPECT_FALSE(tensor_is_quantizable("blk.0.attn_q_norm.weight", matrix));
  EXPECT_FALSE(tensor_is_quantizable("blk.0.ffn_gate_inp.weight", matrix));
  EXPECT_FALSE(tensor_is_quantizable("position_embd.weight", matrix));
  EXPECT_FALSE(tensor_is_quantizable("token_types.weight", matrix));
  EXPECT_FALSE(tensor_is_quantizable("blk.0.ssm_conv1d.weight", matrix));
  EXPECT_FALSE(tensor_is_quantizable("blk.0.time_mix_w1.weight", matrix));
}

TEST(QuantizeRules, FallbackWhenRowsDoNotFitTheBlocks) {
  EXPECT_EQ(fallback_type(DType::Q4_K, 256), DType::Q4_K);
  EXPECT_EQ(fallback_type(DType::Q2_K, 64), DType::Q4_0);
  EXPECT_EQ(fallback_type(DType::Q3_K, 64), DType::Q4_0);
  EXPECT_EQ(fallback_type(DType::Q4_K, 64), DType::Q5_0);
  EXPECT_EQ(fallback_type(DType::Q5_K, 64), DType::Q5_1);
  EXPECT_EQ(fallback_type(DType::Q6_K, 64), DType::Q8_0);
  EXPECT_EQ(fallback_type(DType::IQ4_XS, 64), DType::IQ4_NL);
  // rows that fit no 32-value block: F16
  EXPECT_EQ(fallback_type(DType::Q4_K, 80), DType::F16);
  EXPECT_EQ(fallback_type(DType::Q8_0, 80), DType::F16);
  EXPECT_EQ(fallback_type(DType::Q4_0, 48), DType::F16);
  EXPECT_EQ(fallback_type(DType::Q4_0, 96), DType::Q4_0);
}

// A Llama-3-8B-like model: 32 layers, 32 heads sharing 8 key/value heads (GQA 4).
const ModelFacts kLlama8B{"llama", 32, 4, 0, false};

DType type_of(MixtureId m, WeightRole role, int32_t index, const ModelFacts& model = kLlama8B,
              int64_t row_length = 4096) {
  const int32_t count = model.n_layer;
  return mixture_tensor_type(m, role, RolePosition{index, count}, model, row_length);
}

std::set<int32_t> layers_with(MixtureId m, WeightRole role, DType type, const ModelFacts& model = kLlama8B) {
  std::set<int32_t> layers;
  for (int32_t i = 0; i < model.n_layer; ++i) {
    if (type_of(m, role, i, model) == type) layers.insert(i);
  }
  return layers;
}

TEST(QuantizeRules, MoreBitsForTheLayersThatMatterMost) {
  // Q4_K_M / Q5_K_M: attn_v and ffn_down get Q6_K in the first and last eighth and in every
  // third layer between (i − n/8) % 3 == 2.
  const std::set<int32_t> more_bits = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  EXPECT_EQ(layers_with(MixtureId::kQ4_K_M, WeightRole::kAttentionV, DType::Q6_K), more_bits);
  EXPECT_EQ(layers_with(MixtureId::kQ4_K_M, WeightRole::kFfnDown, DType::Q6_K), more_bits);
  EXPECT_EQ(layers_with(MixtureId::kQ5_K_M, WeightRole::kAttentionV, DType::Q6_K), more_bits);
  EXPECT_EQ(layers_with(MixtureId::kQ4_K_M, WeightRole::kAttentionV, DType::Q4_K).size(),
            32 - more_bits.size());
  // Q4_K_S: the first four attn_v and the first eighth of ffn_down get Q5_K.
  EXPECT_EQ(layers_with(MixtureId::kQ4_K_S, WeightRole::kAttentionV, DType::Q5_K),
            (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(layers_with(MixtureId::kQ4_K_S, WeightRole::kFfnDown, DType::Q5_K),
            (std::set<int32_t>{0, 1, 2, 3}));
  // Q3_K_M: attn_v Q5_K for the first two, Q4_K after; ffn_down Q5_K for the first sixteenth.
  EXPECT_EQ(layers_with(MixtureId::kQ3_K_M, WeightRole::kAttentionV, DType::Q5_K), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(layers_with(MixtureId::kQ3_K_M, WeightRole::kAttentionV, DType::Q4_K).size(), 30u);
  EXPECT_EQ(layers_with(MixtureId::kQ3_K_M, WeightRole::kFfnDown, DType::Q5_K), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(layers_with(MixtureId::kQ3_K_M, WeightRole::kFfnDown, DType::Q4_K).size(), 30u);
  // Q3_K_L: attn_v, ffn_down and attn_output Q5_K throughout.
  EXPECT_EQ(layers_with(MixtureId::kQ3_K_L, WeightRole::kAttentionV, DType::Q5_K).size(), 32u);
  EXPECT_EQ(type_of(MixtureId::kQ3_K_L, WeightRole::kAttentionOutput, 0), DType::Q5_K);
  // Q3_K_S, Q5_K_S, Q6_K: no exceptions except the output matrix.
  for (MixtureId m : {MixtureId::kQ3_K_S, MixtureId::kQ5_K_S, MixtureId::kQ6_K}) {
    for (WeightRole role : {WeightRole::kAttentionV, WeightRole::kFfnDown, WeightRole::kAttentionOutput,
                            WeightRole::kAttentionQ, WeightRole::kFfnUp, WeightRole::kTokenEmbedding}) {
      EXPECT_EQ(type_of(m, role, 5), mixture(m).default_type) << mixture(m).name;
    }
  }
}

TEST(QuantizeRules, OutputMatrix) {
  // Q6_K in every quantized mixture but Q8_0, whose output stays Q8_0.
  EXPECT_EQ(type_of(MixtureId::kQ4_0, WeightRole::kOutput, 0), DType::Q6_K);
  EXPECT_EQ(type_of(MixtureId::kQ2_K, WeightRole::kOutput, 0), DType::Q6_K);
  EXPECT_EQ(type_of(MixtureId::kQ6_K, WeightRole::kOutput, 0), DType::Q6_K);
  EXPECT_EQ(type_of(MixtureId::kQ8_0, WeightRole::kOutput, 0), DType::Q8_0);
  // Rows that do not fit the default type's block: Q8_0 (then F16 by the fallback if need be).
  EXPECT_EQ(type_of(MixtureId::kQ4_K_M, WeightRole::kOutput, 0, kLlama8B, 288), DType::Q8_0);
  EXPECT_EQ(type_of(MixtureId::kQ4_0, WeightRole::kOutput, 0, kLlama8B, 64), DType::Q6_K);
  EXPECT_EQ(fallback_type(DType::Q6_K, 64), DType::Q8_0);
  // Falcon keeps Q8_0.
  const ModelFacts falcon{"falcon", 32, 8, 0, false};
  EXPECT_EQ(type_of(MixtureId::kQ4_K_M, WeightRole::kOutput, 0, falcon), DType::Q8_0);
  // The plain float mixtures have no rules.
  EXPECT_EQ(type_of(MixtureId::kF16, WeightRole::kOutput, 0), DType::F16);
  EXPECT_EQ(type_of(MixtureId::kBF16, WeightRole::kAttentionV, 0), DType::BF16);
}

TEST(QuantizeRules, GqaExpertsAndSizeClass) {
  // Q2_K: attn_v Q4_K with GQA ≥ 4, else Q3_K; ffn_down and attn_output Q3_K.
  EXPECT_EQ(type_of(MixtureId::kQ2_K, WeightRole::kAttentionV, 7), DType::Q4_K);
  const ModelFacts no_gqa{"llama", 32, 1, 0, false};
  EXPECT_EQ(type_of(MixtureId::kQ2_K, WeightRole::kAttentionV, 7, no_gqa), DType::Q3_K);
  EXPECT_EQ(type_of(MixtureId::kQ2_K, WeightRole::kFfnDown, 7), DType::Q3_K);
  EXPECT_EQ(type_of(MixtureId::kQ2_K, WeightRole::kAttentionOutput, 7), DType::Q3_K);
  // IQ4_NL/IQ4_XS: attn_v Q5_K with GQA ≥ 4; ffn_down Q5_K in the first eighth.
  EXPECT_EQ(type_of(MixtureId::kIQ4_XS, WeightRole::kAttentionV, 7), DType::Q5_K);
  EXPECT_EQ(type_of(MixtureId::kIQ4_XS, WeightRole::kAttentionV, 7, no_gqa), DType::IQ4_XS);
  EXPECT_EQ(type_of(MixtureId::kIQ4_NL, WeightRole::kFfnDown, 3), DType::Q5_K);
  EXPECT_EQ(type_of(MixtureId::kIQ4_NL, WeightRole::kFfnDown, 4), DType::IQ4_NL);
  // 8 experts: attn_v and attn_k Q8_0, attn_output Q5_K for the 3–4-bit mixtures.
  const ModelFacts mixtral{"llama", 32, 4, 8, false};
  EXPECT_EQ(type_of(MixtureId::kQ4_K_M, WeightRole::kAttentionV, 10, mixtral), DType::Q8_0);
  EXPECT_EQ(type_of(MixtureId::kQ4_0, WeightRole::kAttentionK, 10, mixtral), DType::Q8_0);
  EXPECT_EQ(type_of(MixtureId::kQ4_K_M, WeightRole::kAttentionOutput, 10, mixtral), DType::Q5_K);
  EXPECT_EQ(type_of(MixtureId::kQ3_K_L, WeightRole::kAttentionOutput, 10, mixtral), DType::Q3_K);
  // The 70B class: attn_v of 3–4 bits becomes Q5_K.
  const ModelFacts llama70b{"llama", 80, 8, 0, true};
  EXPECT_EQ(type_of(MixtureId::kQ3_K_S, WeightRole::kAttentionV, 40, llama70b), DType::Q5_K);
  EXPECT_EQ(type_of(MixtureId::kQ4_K_M, WeightRole::kAttentionV, 41, llama70b), DType::Q5_K);
  EXPECT_EQ(type_of(MixtureId::kQ4_K_M, WeightRole::kAttentionV, 0, llama70b), DType::Q6_K);
  EXPECT_EQ(type_of(MixtureId::kQ4_0, WeightRole::kAttentionV, 40, llama70b), DType::Q4_0);
}

}  // namespace
}  // namespace sinter
