// LFM2's short-convolution block (llama.cpp's build_shortconv_block): a gated causal depthwise
// convolution of a few taps, in place of attention in most of LFM2's layers.
//
//   B, C, x [n_embd, T] = rows of in_proj · h   (in that order: in_proj is [n_embd, 3·n_embd])
//   conv [n_embd, T]    = ssm_conv(B ⊙ x)       (kernel [l_cache, n_embd], no bias, no activation)
//   out [n_embd, T]     = out_proj · (C ⊙ conv)
//
// The convolution carries each sequence's last l_cache − 1 inputs B ⊙ x from pass to pass: a
// recurrent state of [l_cache − 1, n_embd] per sequence (memory/recurrent_state.h).
#pragma once

#include <cstdint>

#include "memory/recurrent_state.h"
#include "model/builder.h"
#include "model/weights.h"

namespace sinter {

struct ShortConvWeights {
  Tensor* in_proj = nullptr;   // shortconv.in_proj [n_embd, 3·n_embd]: B's rows, C's, then x's
  Tensor* conv = nullptr;      // shortconv.conv [l_cache, n_embd], F32 (the kernel per channel)
  Tensor* out_proj = nullptr;  // shortconv.out_proj [n_embd, n_embd]
};

// blk.<il>.shortconv.{in_proj,conv,out_proj}.weight.
ShortConvWeights bind_short_conv(WeightBinder& b, int il, int64_t n_embd, int64_t l_cache);

// The convolution's kernel must be F32 (llama.cpp's ggml_ssm_conv reads F32 too; converters and
// quantizers keep it so): an error naming the tensor otherwise.
Status check_short_conv_types(const ShortConvWeights& w);

// What the block keeps per sequence: its last l_cache − 1 convolution inputs.
RecurrentLayerShape short_conv_state(int64_t n_embd, int64_t l_cache);

// h [n_embd, T] -> [n_embd, T]; `recurrent_layer` is the block's index among the model's
// recurrent layers (its state in ForwardContext::state()), `il` its block (for names).
Tensor* build_short_conv(ForwardContext& fx, Tensor* h, const ShortConvWeights& w, int recurrent_layer,
                         int il);

}  // namespace sinter
