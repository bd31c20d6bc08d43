// Mixture-of-experts feed-forward layers (llama.cpp's build_moe_ffn): a router scores every
// expert for each token, the top k are chosen, and the token's output is the weighted sum of the
// chosen experts' gated FFNs, plus shared experts where the model has them. Options cover the
// families: softmax, sigmoid (DeepSeek-V3) or softmax-over-the-chosen (gpt-oss) gating; a
// selection bias (DeepSeek-V3); renormalized and scaled weights.
//
//   logits [n_expert, T] = router · x (+ b)  probs = gating(logits)
//   ids [k, T] = top_k(probs + bias)          weights [k, T] = probs at ids (then normalized, scaled)
//   out [n_embd, T] = Σ_j weights[j] · down_e(act(gate_e x) · up_e x), e = ids[j]  (+ shared(x))
//   (each expert product plus that expert's bias column where the model has biases)
#pragma once

#include <cstdint>

#include "model/builder.h"
#include "model/hparams.h"
#include "model/registry.h"
#include "model/weights.h"

namespace sinter {

struct MoeWeights {
  Tensor* router = nullptr;          // ffn_gate_inp [n_embd, n_expert]
  Tensor* gate = nullptr;            // ffn_gate_exps [n_embd, n_ff_exp, n_expert] (absent: ungated)
  Tensor* up = nullptr;              // ffn_up_exps [n_embd, n_ff_exp, n_expert]
  Tensor* down = nullptr;            // ffn_down_exps [n_ff_exp, n_embd, n_expert]
  Tensor* selection_bias = nullptr;  // exp_probs_b [n_expert]: added for the choice only
  FfnWeights shared;                 // shared experts (*_shexp); absent when shared.down is null
  // ffn_gate_inp_shexp [n_embd]: the shared experts' output times sigmoid(shared_gate · x), one
  // gate per token (Qwen 3.5 MoE, Qwen3-Next); absent: ungated.
  Tensor* shared_gate = nullptr;
  // Biases (gpt-oss): the router's [n_expert], and each expert's [n_out, n_expert].
  Tensor* router_bias = nullptr;
  Tensor* gate_bias = nullptr;
  Tensor* up_bias = nullptr;
  Tensor* down_bias = nullptr;
  bool present() const { return router != nullptr; }
};

enum class MoeGating : uint32_t {
  kSoftmax = 1,          // over all experts (llama.cpp's gating_func 1)
  kSigmoid = 2,          // each expert alone (2)
  kSoftmaxOfChosen = 3,  // the chosen experts' raw logits, softmaxed among themselves (3)
};

struct MoeOptions {
  int32_t n_expert = 0;
  int32_t n_expert_used = 0;
  MoeGating gating = MoeGating::kSoftmax;
  bool normalize = false;  // the chosen weights divided by their sum
  float scale = 1.0f;      // then multiplied by this (DeepSeek's routed scaling factor)
  // DeepSeek-V3's grouped selection: experts in `groups` groups, only the `groups_used` best
  // (by the sum of each group's two best scores) compete for the top k; groups ≤ 1: none.
  int32_t groups = 0;
  int32_t groups_used = 0;
  FfnActivation activation = FfnActivation::kSiluGated;
  // gpt-oss's clamped SwiGLU (Graph::swiglu_oai) instead of `activation` when limit > 0.
  float swiglu_limit = 0.0f;
  float swiglu_alpha = 1.0f;
};

// The keys every MoE architecture reads, with llama.cpp's defaults.
struct MoeHParams {
  uint32_t n_expert = 0;
  uint32_t n_expert_used = 0;
  float weights_scale = 0.0f;  // expert_weights_scale; 0: none
  // `required`: an MoE-only architecture; otherwise n_expert 0 means a dense model (llama).
  void declare(HParams& p, bool required);
  // Synthetic models: the dims' expert counts (8 experts, 2 used, when not given).
  void set_synth_dims(const SynthDims& d);
  MoeOptions options(bool normalize) const;
};

// ffn_gate_inp and ffn_{gate,up,down}_exps of layer `il`.
MoeWeights bind_moe(WeightBinder& b, int il, int64_t n_embd, int64_t n_ff_exp, int64_t n_expert);
// The biases of layer `il`'s router and experts (gpt-oss): ffn_{gate_inp,gate_exps,up_exps,down_exps}.bias.
void bind_moe_biases(WeightBinder& b, int il, MoeWeights& w, int64_t n_embd, int64_t n_ff_exp,
                     int64_t n_expert);
// The shared experts of layer `il`: ffn_{gate,up,down}_shexp [n_embd, n_ff_shared].
FfnWeights bind_shared_experts(WeightBinder& b, int il, int64_t n_embd, int64_t n_ff_shared);

// The shared experts' gate of layer `il`: ffn_gate_inp_shexp.weight [n_embd].
Tensor* bind_shared_expert_gate(WeightBinder& b, int il, int64_t n_embd);

// x [n_embd, T] -> [n_embd, T]; every intermediate named ffn_moe_* (layer il). Experts without
// gate weights (w.gate null: Nemotron-H) apply o.activation, an ungated one, to up alone. The
// router reads `router_x` where given (Nemotron-H's latent experts: the router sees the hidden
// state, the experts its latent projection x, of a width of its own).
Tensor* build_moe_ffn(ForwardContext& fx, Tensor* x, const MoeWeights& w, const MoeOptions& o, int il,
                      Tensor* router_x = nullptr);

}  // namespace sinter
