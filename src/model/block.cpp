#include "model/block.h"

#include <algorithm>

namespace sinter {
namespace {

Tensor* norm_if(ForwardContext& fx, Tensor* x, const NormWeights& w, const BlockOptions& o, const char* name,
                int layer) {
  return w.weight != nullptr ? fx.build_norm(x, w, o.norm, o.norm_eps, name, layer) : x;
}

Tensor* scaled(ForwardContext& fx, Tensor* x, float s) { return s != 1.0f ? fx.graph.scale(x, s) : x; }

// The block's attention: the architecture's own where it has one.
Tensor* attend(ForwardContext& fx, Tensor* x, const BlockWeights& w, const AttentionOptions& attention,
               const BlockOptions& o, int layer) {
  return o.attention ? o.attention(fx, x, attention, layer) : fx.build_attn(x, w.attn, attention, layer);
}

// The block's feed-forward branch: its experts where it has them, else its dense FFN.
Tensor* ffn_branch(ForwardContext& fx, Tensor* x, const BlockWeights& w, const BlockOptions& o, int layer) {
  return w.moe.present() ? build_moe_ffn(fx, x, w.moe, o.moe, layer)
                         : fx.build_ffn(x, w.ffn, o.activation, layer);
}

}  // namespace

Tensor* build_block(ForwardContext& fx, Tensor* x, const BlockWeights& w, const AttentionOptions& attention,
                    const BlockOptions& o, int il, int n_layer) {
  Graph& g = fx.graph;
  Tensor* residual = x;
  Tensor* cur = norm_if(fx, x, w.attn_norm, o, "attn_norm", il);
  if (o.parallel) {
    Tensor* normed = cur;
    Tensor* attended = attend(fx, normed, w, attention, o, il);
    fx.filter_last_layer(il, n_layer, {&attended, &normed, &residual});
    Tensor* ffn = ffn_branch(fx, normed, w, o, il);
    return ForwardContext::name(g.add(g.add(ffn, residual), attended), "l_out", il);
  }
  cur = attend(fx, cur, w, attention, o, il);
  cur = scaled(fx, norm_if(fx, cur, w.attn_post_norm, o, "attn_post_norm", il), o.residual_scale);
  fx.filter_last_layer(il, n_layer, {&cur, &residual});
  Tensor* ffn_input = ForwardContext::name(g.add(cur, residual), "ffn_inp", il);
  cur = norm_if(fx, ffn_input, w.ffn_norm, o, "ffn_norm", il);
  cur = ffn_branch(fx, cur, w, o, il);
  cur = scaled(fx, norm_if(fx, cur, w.ffn_post_norm, o, "ffn_post_norm", il), o.residual_scale);
  return ForwardContext::name(g.add(cur, ffn_input), "l_out", il);
}

Tensor* build_decoder(ForwardContext& fx, const ModelShape& shape, const DecoderWeights& w,
                      AttentionOptions attention, const DecoderOptions& o) {
  Tensor* x = fx.build_inp_embd(w.token_embd);
  if (o.embedding_scale != 1.0f) x = ForwardContext::name(fx.graph.scale(x, o.embedding_scale), "inp_scaled");
  const int n_layer = static_cast<int>(w.layers.size());
  for (int il = 0; il < n_layer; ++il) {
    fx.use_layer(attention, shape, il);
    x = build_block(fx, x, w.layers[static_cast<size_t>(il)], attention, o.block, il, n_layer);
  }
  x = fx.build_norm(x, w.output_norm, o.block.norm, o.block.norm_eps, "result_norm", -1);
  if (shape.encoder) return x;  // an embedding model's hidden states (model.h)
  return fx.build_logits(x, w.output, w.output_bias, o.logit_scale, o.logit_softcap);
}

void add_hybrid_layer(std::vector<HybridLayer>& layers, bool attention) {
  const auto same_kind = std::count_if(
      layers.begin(), layers.end(), [attention](const HybridLayer& l) { return l.attention == attention; });
  layers.push_back({attention, static_cast<int>(same_kind)});
}

Tensor* build_hybrid_blocks(ForwardContext& fx, Tensor* x, const ModelShape& shape, const DecoderWeights& w,
                            AttentionOptions attention, const std::vector<HybridLayer>& layers,
                            const BlockOptions& attention_block, const BlockOptions& other_block) {
  const int n_layer = static_cast<int>(w.layers.size());
  for (int il = 0; il < n_layer; ++il) {
    const HybridLayer& layer = layers[static_cast<size_t>(il)];
    if (layer.attention) fx.use_layer(attention, shape, layer.index);
    x = build_block(fx, x, w.layers[static_cast<size_t>(il)], attention,
                    layer.attention ? attention_block : other_block, il, n_layer);
  }
  return x;
}

}  // namespace sinter
