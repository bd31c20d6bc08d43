// The gated delta net (Qwen 3.5 / 3.6, Qwen3-Next: llama.cpp's build_layer_attn_linear): a linear
// attention whose per-head state S [d_k, d_v] decays and is written by the delta rule at every
// token (Graph::gated_delta_net), in three of every four of those models' layers. A layer keeps
// two states per sequence in the model's RecurrentState: the last d_conv − 1 inputs of its short
// convolution and the delta rule's S of every value head. Every token is computed as if it came
// alone, so a sequence's outputs do not depend on how it is split into passes or on what else is
// in the batch.
//
//   qkv [2·H_k·d_k + H·d_v, T] = attn_qkv · x          q's rows, k's, then v's
//   z [H·d_v, T]               = attn_gate · x
//   beta [H, T]                = sigmoid(ssm_beta · x)
//   g [H, T]                   = softplus(ssm_alpha · x + ssm_dt.bias) · ssm_a   (ssm_a = −exp(A_log))
//   qkv = silu(conv(qkv))                               causal depthwise, kernel d_conv, no bias
//   q, k = L2-normalized per head (eps: the model's RMS epsilon)
//   y [d_v, H, T] = gated_delta_net(q, k, v, g, beta; scale 1/√d_k)
//   out = ssm_out · (rms_norm(y) per head · ssm_norm · silu(z))
//
// llama.cpp's ssm.* keys hold the sizes: state_size d_k (= d_v), group_count H_k,
// time_step_rank H, inner_size H·d_v, conv_kernel d_conv.
#pragma once

#include <cstdint>

#include "memory/recurrent_state.h"
#include "model/builder.h"
#include "model/mamba_layer.h"
#include "model/weights.h"

namespace sinter {

// A layer's sizes, from the ssm.* keys as llama.cpp reads them for these models.
struct DeltaNetDims {
  int64_t d_conv = 0;
  int64_t d_k = 0;       // ssm.state_size: a key (and query) head's size
  int64_t n_head_k = 0;  // ssm.group_count: key (and query) heads
  int64_t d_v = 0;       // ssm.inner_size / ssm.time_step_rank: a value head's size
  int64_t n_head = 0;    // ssm.time_step_rank: value heads
  static DeltaNetDims of(const SsmHParams& ssm);
  int64_t key_width() const { return n_head_k * d_k; }
  int64_t value_width() const { return n_head * d_v; }
  // The convolution's channels: q, k and v.
  int64_t conv_channels() const { return 2 * key_width() + value_width(); }
};

// Checks the keys beyond SsmHParams' own checks (which already hold H·d_v = inner_size, H_k
// dividing H and the states' sizes): d_k = d_v, as llama.cpp's op requires.
void check_delta_net_keys(HParams& p, const SsmHParams& ssm);

// What one layer keeps per sequence: the convolution state [d_conv − 1, channels] (state 0) and
// S [d_v, d_k, H] (state 1, Graph::gated_delta_net's layout: the value index contiguous).
RecurrentLayerShape delta_net_state(const DeltaNetDims& d);

struct DeltaNetWeights {
  Tensor* qkv = nullptr;    // attn_qkv [n_embd, conv_channels]
  Tensor* gate = nullptr;   // attn_gate [n_embd, H·d_v]: z
  Tensor* beta = nullptr;   // ssm_beta [n_embd, H]
  Tensor* alpha = nullptr;  // ssm_alpha [n_embd, H]
  // Qwen3-Next's ssm_ba [n_embd, 2·H] instead of beta and alpha: per key head, the beta rows of
  // its H / H_k value heads, then their alpha rows.
  Tensor* beta_alpha = nullptr;
  Tensor* conv = nullptr;  // ssm_conv1d [d_conv, conv_channels], F32
  Tensor* dt_b = nullptr;  // ssm_dt.bias [H]
  Tensor* a = nullptr;     // ssm_a [H]: −exp(A_log), negative
  Tensor* norm = nullptr;  // ssm_norm [d_v]
  Tensor* out = nullptr;   // ssm_out [H·d_v, n_embd]
};

struct DeltaNetOptions {
  DeltaNetDims dims;
  float norm_eps = 1e-6f;  // of the L2 norms and the gated RMS norm
  int state_layer = 0;     // the layer's index among the model's recurrent layers
  // How value heads share key heads (graph.h's DeltaNetParams): Qwen 3.5's files h % H_k,
  // Qwen3-Next's h / (H / H_k).
  bool grouped_heads = false;
};

// blk.<il>.{attn_qkv, attn_gate, ssm_beta, ssm_alpha, ssm_conv1d, ssm_dt, ssm_a, ssm_norm, ssm_out}
// (with `fused_beta_alpha`, Qwen3-Next's ssm_ba instead of ssm_beta and ssm_alpha).
DeltaNetWeights bind_delta_net(WeightBinder& b, int il, int64_t n_embd, const DeltaNetDims& d,
                               bool fused_beta_alpha = false);

// The layer after its projections: qkv [conv_channels, T], z [H·d_v, T], beta_logits and alpha
// [H, T], all contiguous -> [n_embd, T].
Tensor* build_delta_net_core(ForwardContext& fx, Tensor* qkv, Tensor* z, Tensor* beta_logits, Tensor* alpha,
                             const DeltaNetWeights& w, const DeltaNetOptions& o, int il);

// The whole layer: x [n_embd, T] (normed) -> [n_embd, T].
Tensor* build_delta_net_layer(ForwardContext& fx, Tensor* x, const DeltaNetWeights& w,
                              const DeltaNetOptions& o, int il);

}  // namespace sinter
