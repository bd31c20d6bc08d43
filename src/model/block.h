// The decoder block of the builder toolkit: attention then feed-forward, each a residual branch,
// composed from options rather than architectures. Which norms a block has is which weights it
// holds: a pre-norm block (Llama) has attn_norm and ffn_norm; Gemma 2/3 add post-norms; OLMo 2
// has post-norms only; a parallel block (Command R) feeds one norm to both branches.
//
//   sequential:  h = x + s·post(attn(pre(x)));   out = h + s·post(ffn(pre(h)))
//   parallel:    n = pre(x);                     out = (ffn(n) + x) + attn(n)
#pragma once

#include <functional>
#include <vector>

#include "model/builder.h"
#include "model/moe.h"

namespace sinter {

struct BlockWeights {
  NormWeights attn_norm;  // before attention (absent: none)
  AttentionWeights attn;
  NormWeights attn_post_norm;  // on the attention's output, before the residual add
  NormWeights ffn_norm;
  FfnWeights ffn;
  MoeWeights moe;  // when present, the FFN is this mixture of experts instead of `ffn`
  NormWeights ffn_post_norm;
};

struct BlockOptions {
  NormKind norm = NormKind::kRms;
  float norm_eps = 1e-5f;
  FfnActivation activation = FfnActivation::kSiluGated;
  float residual_scale = 1.0f;  // each branch's output times this (Granite)
  bool parallel = false;        // attention and FFN both from attn_norm(x) (Command R)
  MoeOptions moe = {};          // for blocks whose weights hold experts
  // An attention of the architecture's own (DeepSeek's latent attention) instead of
  // build_attn over the block's attention weights: x [n_embd, T] -> [n_embd, T].
  std::function<Tensor*(ForwardContext& fx, Tensor* x, const AttentionOptions& layer, int il)> attention =
      nullptr;
};

// The whole decoder: token embeddings, one block per layer, the final norm and the logits.
struct DecoderWeights {
  Tensor* token_embd = nullptr;
  NormWeights output_norm;
  Tensor* output = nullptr;
  Tensor* output_bias = nullptr;
  std::vector<BlockWeights> layers;
};

struct DecoderOptions {
  float embedding_scale = 1.0f;  // Gemma: √n_embd; Granite: its embedding multiplier
  BlockOptions block;
  float logit_scale = 1.0f;    // Command R, Granite (1 / its divisor)
  float logit_softcap = 0.0f;  // Gemma 2/3: cap · tanh(logits / cap)
};

// `attention` holds what every layer shares; each layer's cache, RoPE and window come from
// `shape` (ForwardContext::use_layer).
Tensor* build_decoder(ForwardContext& fx, const ModelShape& shape, const DecoderWeights& w,
                      AttentionOptions attention, const DecoderOptions& options);

// One block of layer `layer` of `n_layer`; the last one keeps only the rows whose logits are
// wanted.
Tensor* build_block(ForwardContext& fx, Tensor* x, const BlockWeights& w, const AttentionOptions& attention,
                    const BlockOptions& options, int layer, int n_layer);

// Hybrids (LFM2, Jamba, Granite 4.0-H, Qwen 3.5, Kimi Linear): where a block keeps its memory, KV
// layer `index` for an attention block or recurrent layer `index` for the others, each counted
// among its kind.
struct HybridLayer {
  bool attention = false;
  int index = 0;
};
// Appends the next block's entry (its index the count of its kind so far).
void add_hybrid_layer(std::vector<HybridLayer>& layers, bool attention);

// The blocks of a hybrid in order from x: attention blocks with `attention_block` on their KV
// layer, the others with `other_block` (whose operator reads layers[il].index). Returns the last
// block's output (the caller adds the output norm and the logits).
Tensor* build_hybrid_blocks(ForwardContext& fx, Tensor* x, const ModelShape& shape, const DecoderWeights& w,
                            AttentionOptions attention, const std::vector<HybridLayer>& layers,
                            const BlockOptions& attention_block, const BlockOptions& other_block);

}  // namespace sinter
