// Mamba's selective state-space layers (llama.cpp's build_mamba_layer / build_mamba2_layer), for
// the pure Mamba architectures (archs/mamba.cpp, archs/mamba2.cpp) and the hybrids that put them
// beside attention layers. A layer keeps two states per sequence in the model's RecurrentState:
// the last d_conv − 1 inputs of its convolution and the scan's state. Every token is computed as
// if it came alone (graph.h's recurrent ops), so a sequence's outputs do not depend on how it
// is split into passes or on what else is in the batch.
//
// Mamba-1 (head_dim 1, one head per inner channel, one group):
//   x, z = split(ssm_in · h)                                [d_inner] each
//   x = silu(conv(x) + conv_b)                              causal depthwise, kernel d_conv
//   dt_low, B, C = split(ssm_x · x)                         [dt_rank], [d_state], [d_state]
//   (Falcon-Mamba: dt_low, B, C each RMS-normed, no weight; Jamba: with weights)
//   dt = ssm_dt · dt_low + dt_b                             [d_inner]
//   y = scan(x, softplus(dt), A [d_state, d_inner], B, C) + D ⊙ x
//   out = ssm_out · (silu(z) ⊙ y)
// Mamba-2 (n_head heads of head_dim = d_inner / n_head; B and C per group of heads):
//   z, xBC, dt = split(ssm_in · h)                          [d_inner], [d_inner + 2·G·N], [n_head]
//   xBC = silu(conv(xBC) + conv_b);  x, B, C = split(xBC)   [head_dim, n_head], [N, G], [N, G]
//   y = scan(x, softplus(dt + dt_b), A [1, n_head], B, C) + D[h] · x
//   y = silu(z) ⊙ y, then RMS-normed per group of d_inner / G values times ssm_norm
//   out = ssm_out · y
#pragma once

#include <cstdint>

#include "memory/recurrent_state.h"
#include "model/builder.h"
#include "model/hparams.h"
#include "model/registry.h"
#include "model/weights.h"

namespace sinter {

enum class MambaVersion { k1, k2 };

// llama.cpp's ssm_* hyper-parameters ({arch}.ssm.*), shared by every architecture with Mamba
// layers.
struct SsmHParams {
  uint32_t d_conv = 0;   // ssm.conv_kernel
  uint32_t d_inner = 0;  // ssm.inner_size
  uint32_t d_state = 0;  // ssm.state_size
  // ssm.time_step_rank: Mamba-1's rank of the time-step projection; Mamba-2's head count.
  uint32_t dt_rank = 0;
  uint32_t n_group = 1;     // ssm.group_count (Mamba-2)
  bool dt_b_c_rms = false;  // ssm.dt_b_c_rms (Mamba-1: Falcon-Mamba's unweighted norms)

  void declare(HParams& p, MambaVersion version);
  // The dimensions of a synthetic model's layers: d_inner = 2·n_embd (llama.cpp runs Mamba-1
  // files of that expansion only), a kernel of 4; Mamba-2 `n_head` heads in `n_group` groups and
  // a state of n_embd / 4 (at most 128, Mamba-2's); Mamba-1 a state of 16 (Mamba's) and a rank of
  // Mamba's ⌈n_embd / 16⌉ rounded up to a multiple of 64. The rank is ssm_dt's row length, and
  // the oracle (llama.cpp, 2026-12) computes a repacked Q8_0 product of rows of a single block
  // (32 values) wrongly (a KL of 0.3 against its own F32 results); at 16 (F16 by fallback), the
  // Falcon variant's Q4_K_M files differed from it by a mean KL of ~3.3e-4 on every seed tried,
  // at 64 by 4e-5..1.4e-4.
  void set_synth_dims(MambaVersion version, uint32_t n_embd, uint32_t n_head, uint32_t n_group);

  uint32_t n_head(MambaVersion version) const { return version == MambaVersion::k1 ? d_inner : dt_rank; }
  uint32_t head_dim(MambaVersion version) const { return d_inner / n_head(version); }
  // Channels of the convolution: Mamba-1's x, Mamba-2's x, B and C.
  int64_t conv_channels(MambaVersion version) const {
    return version == MambaVersion::k1 ? int64_t{d_inner} : int64_t{d_inner} + 2 * int64_t{n_group} * d_state;
  }
  // What one layer keeps per sequence: the convolution state [d_conv − 1, channels] and the scan
  // state [d_state, head_dim, n_head] (state 0 and 1 of the layer in the RecurrentState).
  RecurrentLayerShape layer_state(MambaVersion version) const;
};

struct Mamba1Weights {
  Tensor* in = nullptr;      // ssm_in [n_embd, 2·d_inner]: x's rows, then z's
  Tensor* conv = nullptr;    // ssm_conv1d [d_conv, d_inner], F32
  Tensor* conv_b = nullptr;  // ssm_conv1d.bias [d_inner]
  Tensor* x = nullptr;       // ssm_x [d_inner, dt_rank + 2·d_state]: dt's rows, B's, C's
  Tensor* dt = nullptr;      // ssm_dt [dt_rank, d_inner]
  Tensor* dt_b = nullptr;    // ssm_dt.bias [d_inner]
  Tensor* a = nullptr;       // ssm_a [d_state, d_inner], F32, negative (−exp(A_log))
  Tensor* d = nullptr;       // ssm_d [d_inner]
  Tensor* out = nullptr;     // ssm_out [d_inner, n_embd]
  // Jamba's weighted norms of dt_low, B and C (all three or none).
  Tensor* dt_norm = nullptr;  // [dt_rank]
  Tensor* b_norm = nullptr;   // [d_state]
  Tensor* c_norm = nullptr;   // [d_state]
};

struct Mamba2Weights {
  Tensor* in = nullptr;      // ssm_in [n_embd, 2·d_inner + 2·G·N + n_head]: z, x, B, C, dt
  Tensor* conv = nullptr;    // ssm_conv1d [d_conv, d_inner + 2·G·N], F32
  Tensor* conv_b = nullptr;  // ssm_conv1d.bias [d_inner + 2·G·N]
  Tensor* dt_b = nullptr;    // ssm_dt.bias [n_head]
  Tensor* a = nullptr;       // ssm_a [1, n_head], F32, negative
  Tensor* d = nullptr;       // ssm_d [1, n_head], F32
  Tensor* norm = nullptr;    // ssm_norm [d_inner / G, G], F32 (absent: no norm)
  Tensor* out = nullptr;     // ssm_out [d_inner, n_embd]
};

struct MambaOptions {
  SsmHParams ssm;
  float norm_eps = 1e-5f;  // of the dt/B/C norms (Mamba-1) and the gated norm (Mamba-2)
  // Which recurrent layer of the model's RecurrentState holds this layer's states (the index in
  // ModelShape::recurrent_layers: in a hybrid, not the block's number).
  int state_layer = 0;
};

// Bind blk.<layer>.ssm_* by llama.cpp's names and shapes. Mamba-1 with `weighted_dt_b_c_norms`
// also binds Jamba's ssm_dt_norm / ssm_b_norm / ssm_c_norm weights; Mamba-2's ssm_norm is
// optional unless `norm_required`.
Mamba1Weights bind_mamba1(WeightBinder& b, int layer, int64_t n_embd, const SsmHParams& ssm,
                          bool weighted_dt_b_c_norms = false);
Mamba2Weights bind_mamba2(WeightBinder& b, int layer, int64_t n_embd, const SsmHParams& ssm,
                          bool norm_required = true);

// One layer: x [n_embd, T] (normed) -> [n_embd, T], reading and updating the layer's states for
// each token's sequence (fx.state_slots_input()). Intermediates are named as llama.cpp's where it
// names them.
Tensor* build_mamba1_layer(ForwardContext& fx, Tensor* x, const Mamba1Weights& w, const MambaOptions& o,
                           int layer);
Tensor* build_mamba2_layer(ForwardContext& fx, Tensor* x, const Mamba2Weights& w, const MambaOptions& o,
                           int layer);

}  // namespace sinter
