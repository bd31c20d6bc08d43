// Which type each tensor of a model gets under a quantization mixture: llama.cpp's rules
// (`llama_tensor_get_type` in src/llama-quant.cpp), written as a table of data in
// tensor_rules.cpp and explained in docs/QUANTIZE.md.
//
// The choice for one tensor goes:
//   1. Is it quantized at all? (tensor_is_quantizable: matrices named *weight that are not
//      norms, router gates, position embeddings, ...). If not, it keeps its type.
//   2. Its role (weight_role): output, token embedding, attn_v, ffn_down, ...
//   3. The first rule of the table whose role, mixture and conditions (layer position, GQA,
//      expert count, architecture) hold gives its type; with none, the mixture's default type.
//   4. If the row length is not a multiple of that type's block, a type whose block fits
//      (fallback_type): Q2_K/Q3_K → Q4_0, Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0,
//      IQ4_XS → IQ4_NL, and F16 when even that does not fit.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "model/quantize/mixture.h"
#include "tensor/dtype.h"

namespace sinter {

enum class WeightRole {
  kTokenEmbedding,   // token_embd.weight, per_layer_token_embd.weight
  kOutput,           // output.weight; also token_embd when the model has no output.weight
  kAttentionV,       // attn_v, and the fused attn_qkv / attn_kv_b (llama.cpp treats them alike)
  kAttentionK,       // attn_k
  kAttentionQ,       // attn_q
  kAttentionOutput,  // attn_output
  kFfnUp,            // ffn_up*, experts included
  kFfnGate,          // ffn_gate* (the router ffn_gate_inp is not quantized at all)
  kFfnDown,          // ffn_down*
  kOther,
};

std::string_view weight_role_name(WeightRole role);
// The role a tensor name plays (before the tied-embedding case, which the planner decides).
WeightRole weight_role(std::string_view name);

// Whether a tensor is quantized at all: at least two dimensions that are not 1, a name ending in
// "weight", and not one of the small or sensitive tensors llama.cpp keeps as they are (norms,
// MoE router, position embeddings, convolution kernels, ...). `shape` is ne order.
bool tensor_is_quantizable(std::string_view name, std::span<const int64_t> shape);

// The facts about a model that the rules depend on.
struct ModelFacts {
  std::string architecture;
  int32_t n_layer = 0;   // {arch}.block_count
  int32_t n_gqa = 0;     // attention heads / key-value heads (layer 0); 0 if unknown
  int32_t n_expert = 0;  // {arch}.expert_count; 0 for dense models
  bool is_70b = false;   // the 70B size class (llama.cpp's LLM_TYPE_70B)
};

// Where a tensor stands among those of its role: attn_v-like tensors are counted in llama.cpp's
// order (layer, then name) against their total count; FFN tensors by their layer against the
// layer count. Other roles have no position.
struct RolePosition {
  int32_t index = 0;
  int32_t count = 0;
};

// The mixture's choice for a quantizable tensor (steps 2–3 above), before any fallback.
DType mixture_tensor_type(MixtureId mixture, WeightRole role, RolePosition position, const ModelFacts& model,
                          int64_t row_length);

// `wanted` if a row of `row_length` values is whole blocks of it, else the fallback (step 4).
DType fallback_type(DType wanted, int64_t row_length);

}  // namespace sinter
