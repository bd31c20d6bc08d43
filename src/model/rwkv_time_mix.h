// RWKV's time mixes (its attention): each token's input x [n_embd, T] is mixed with the previous
// token's (x_prev) by learned shares, projected to receptance r, key k, value v, a decay w and a
// gate g, and the WKV recurrence (Graph::rwkv_wkv6 / rwkv_wkv7) carries a state [N, N, H] per
// sequence from token to token; its output is group-normed per head, gated and projected back.
// llama.cpp's graphs (src/models/rwkv6-base.cpp, rwkv7-base.cpp), op for op.
#pragma once

#include <array>
#include <cstdint>

#include "model/rwkv_block.h"

namespace sinter {

// RWKV-6: the shares depend on the token (a LoRA "ddlerp"), and so does the decay.
struct Rwkv6TimeMixWeights {
  Tensor* lerp_x = nullptr;      // [n_embd]: the share that makes the LoRA's input
  Tensor* lerp_fused = nullptr;  // [n_embd, 1, 1, 5]: the base shares of w, k, v, r, g
  // Or each alone (files converted before llama.cpp fused them): time_mix_lerp_{w,k,v,r,g}.
  std::array<Tensor*, 5> lerp{};
  Tensor* w1 = nullptr;        // [n_embd, 5·D]: the shares' LoRA, down (D = time_mix_extra_dim)
  Tensor* w2 = nullptr;        // [D, n_embd, 5]: and up, one matrix per share
  Tensor* first = nullptr;     // time_first u [N, H]: the current token's bonus
  Tensor* decay = nullptr;     // [n_embd]: the decay's bias
  Tensor* decay_w1 = nullptr;  // [n_embd, D']: the decay's LoRA (D' = time_decay_extra_dim)
  Tensor* decay_w2 = nullptr;  // [D', n_embd]
  Tensor* key = nullptr;       // [n_embd, n_embd], and the same for value, receptance, gate, output
  Tensor* value = nullptr;
  Tensor* receptance = nullptr;
  Tensor* gate = nullptr;
  NormWeights ln;  // the group norm's weight and bias [n_embd]
  Tensor* output = nullptr;
};

struct Rwkv6TimeMixDims {
  int64_t n_embd;
  int64_t head_size;
  int64_t extra;        // time_mix_extra_dim
  int64_t decay_extra;  // time_decay_extra_dim
};

Rwkv6TimeMixWeights bind_rwkv6_time_mix(WeightBinder& b, int layer, const Rwkv6TimeMixDims& d);

// The state `kWkvState` of recurrent layer `layer` carries the recurrence.
Tensor* build_rwkv6_time_mix(ForwardContext& fx, Tensor* x, Tensor* x_prev, const Rwkv6TimeMixWeights& w,
                             int64_t head_size, int layer);

// RWKV-7: fixed shares; the decay, the in-context learning rate a and the value's residual mix
// come from LoRAs of their own; the state is updated by a generalized delta rule.
struct Rwkv7TimeMixWeights {
  Tensor* lerp_fused = nullptr;  // [n_embd, 1, 1, 6]: the shares of r, w, k, v, a, g
  Tensor* w0 = nullptr;          // [n_embd]: the decay's bias
  Tensor* w1 = nullptr;          // [n_embd, decay_lora_rank], then tanh
  Tensor* w2 = nullptr;          // [decay_lora_rank, n_embd]
  Tensor* a0 = nullptr;          // the in-context learning rate's bias, LoRA down and up
  Tensor* a1 = nullptr;          // [n_embd, iclr_lora_rank]
  Tensor* a2 = nullptr;          // [iclr_lora_rank, n_embd]
  Tensor* v0 = nullptr;          // the value residual's (bound on layer 0, which has no
  Tensor* v1 = nullptr;          //   residual: converters write a dummy of the iclr rank)
  Tensor* v2 = nullptr;
  Tensor* g1 = nullptr;   // [n_embd, gate_lora_rank], then sigmoid
  Tensor* g2 = nullptr;   // [gate_lora_rank, n_embd]: the output gate
  Tensor* k_k = nullptr;  // [n_embd]: the normalized key's scale
  Tensor* k_a = nullptr;  // [n_embd]: how much the learning rate scales the key
  Tensor* r_k = nullptr;  // [n_embd] (N·H): the current token's bonus per channel
  Tensor* key = nullptr;  // [n_embd, n_embd], and value, receptance, output
  Tensor* value = nullptr;
  Tensor* receptance = nullptr;
  NormWeights ln;
  Tensor* output = nullptr;
};

struct Rwkv7TimeMixDims {
  int64_t n_embd;
  int64_t decay_rank;
  int64_t iclr_rank;
  int64_t value_rank;  // value_residual_mix_lora_rank
  int64_t gate_rank;
};

Rwkv7TimeMixWeights bind_rwkv7_time_mix(WeightBinder& b, int layer, const Rwkv7TimeMixDims& d);

// `v_first`: null at the first layer, which sets it to its values [n_embd, T]; later layers mix
// their values towards it.
Tensor* build_rwkv7_time_mix(ForwardContext& fx, Tensor* x, Tensor* x_prev, Tensor*& v_first,
                             const Rwkv7TimeMixWeights& w, int64_t head_size, int layer);

}  // namespace sinter
