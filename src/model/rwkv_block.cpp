#include "model/rwkv_block.h"

#include <limits>

namespace sinter {
namespace {

// RWKV's LayerNorms: weight and bias, both required.
NormWeights bind_layer_norm(WeightBinder& b, const char* pattern, int layer, int64_t n) {
  return bind_norm(b, pattern, layer, n, Presence::kRequired, Presence::kRequired);
}

// relu(x)², the channel mix's activation (ggml_sqr of ggml_relu): max(x, 0) squared.
Tensor* relu_squared(Graph& g, Tensor* x) {
  Tensor* relu = g.clamp(x, 0.0f, std::numeric_limits<float>::infinity());
  return g.mul(relu, relu);
}

}  // namespace

void RwkvHParams::declare(HParams& p, uint32_t vocab_from_tokenizer) {
  p.required("{arch}.context_length", n_ctx_train);
  p.required("{arch}.embedding_length", n_embd);
  p.block_count("{arch}.block_count", n_layer);
  p.required("{arch}.feed_forward_length", n_ff);
  p.required("{arch}.attention.layer_norm_epsilon", norm_eps);
  p.required("{arch}.wkv.head_size", head_size);
  p.optional("{arch}.token_shift_count", token_shift_count, 2u);
  p.optional("{arch}.vocab_size", n_vocab, vocab_from_tokenizer);
  if (!p.status()) return;
  if (head_size == 0 || n_embd % head_size != 0) {
    p.fail(concat("embedding length ", n_embd, " is not a multiple of the WKV head size ", head_size));
  }
  // Both the time mix's and the channel mix's previous rows (llama.cpp asserts the same).
  if (token_shift_count != 2) p.fail(concat("token shift count ", token_shift_count, " is not 2"));
  if (n_vocab == 0)
    p.fail("the vocabulary size is unknown (no {arch}.vocab_size and no tokenizer.ggml.tokens)");
  if (n_layer == 0 || n_ff == 0 || n_ctx_train == 0)
    p.fail("block count, feed-forward length and context length must be positive");
}

Status RwkvHParams::set_synth_dims(const SynthDims& d) {
  n_vocab = static_cast<uint32_t>(d.n_vocab);
  n_ctx_train = static_cast<uint32_t>(d.n_ctx);
  n_embd = static_cast<uint32_t>(d.n_embd);
  n_layer = static_cast<uint32_t>(d.n_layer);
  n_ff = static_cast<uint32_t>(d.n_ff);
  if (d.n_head <= 0 || d.n_embd % d.n_head != 0) {
    return make_error(ErrorCode::kInvalidArgument, "n_embd ", d.n_embd, " is not divisible by n_head ",
                      d.n_head, " (the WKV heads)");
  }
  head_size = static_cast<uint32_t>(d.n_embd / d.n_head);
  return ok_status();
}

RwkvWeights bind_rwkv(WeightBinder& b, const RwkvHParams& h, bool receptance) {
  const int64_t n_embd = h.n_embd, n_ff = h.n_ff;
  RwkvWeights w;
  w.token_embd = b.require("token_embd.weight", {n_embd, int64_t{h.n_vocab}});
  w.token_embd_norm = bind_layer_norm(b, "token_embd_norm", -1, n_embd);
  w.output_norm = bind_layer_norm(b, "output_norm", -1, n_embd);
  w.output = b.require("output.weight", {n_embd, int64_t{h.n_vocab}});
  w.layers.resize(h.n_layer);
  for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
    const auto name = [il](const char* pattern) { return format_name(pattern, il); };
    RwkvLayerWeights& l = w.layers[static_cast<size_t>(il)];
    l.attn_norm = bind_layer_norm(b, "blk.%d.attn_norm", il, n_embd);
    l.ffn_norm = bind_layer_norm(b, "blk.%d.attn_norm_2", il, n_embd);
    RwkvChannelMixWeights& c = l.channel_mix;
    c.lerp_k = b.require(name("blk.%d.channel_mix_lerp_k.weight"), {n_embd});
    if (receptance) c.lerp_r = b.require(name("blk.%d.channel_mix_lerp_r.weight"), {n_embd});
    c.key = b.require(name("blk.%d.channel_mix_key.weight"), {n_embd, n_ff});
    c.value = b.require(name("blk.%d.channel_mix_value.weight"), {n_ff, n_embd});
    if (receptance) c.receptance = b.require(name("blk.%d.channel_mix_receptance.weight"), {n_embd, n_embd});
  }
  return w;
}

ModelShape rwkv_shape(const char* architecture, const RwkvHParams& h) {
  ModelShape s;
  s.architecture = architecture;
  s.n_vocab = static_cast<int32_t>(h.n_vocab);
  s.n_embd = static_cast<int32_t>(h.n_embd);
  s.n_layer = static_cast<int32_t>(h.n_layer);
  s.n_ctx_train = static_cast<int32_t>(h.n_ctx_train);
  const int64_t n_embd = h.n_embd, n = h.head_size;
  // In RwkvState order: the two shifts' rows, then the WKV state [N, N, H].
  RecurrentLayerShape layer;
  layer.states = {RecurrentStateShape{{n_embd, 1, 1}}, RecurrentStateShape{{n_embd, 1, 1}},
                  RecurrentStateShape{{n, n, h.n_head()}}};
  s.recurrent_layers.assign(h.n_layer, layer);
  return s;
}

Tensor* build_token_shift(ForwardContext& fx, Tensor* x, int layer, RwkvState state, const char* name) {
  Tensor* rows = fx.state().state(layer, state);  // F32 [n_embd, 1, 1, S]
  Tensor* planes = fx.graph.reshape(rows, {rows->ne[0], rows->ne[3], 1, 1});
  return ForwardContext::name(fx.graph.token_shift(x, planes, fx.state_slots_input()), name, layer);
}

Tensor* build_lerp(Graph& g, Tensor* x, Tensor* sx, Tensor* share) { return g.add(g.mul(sx, share), x); }

Tensor* weight_row(Graph& g, Tensor* weight, int64_t n, int64_t index) {
  const std::array<int64_t, kMaxDims> ne{n, 1, 1, 1};
  return g.view(weight, ne, contiguous_strides(DType::F32, ne),
                static_cast<size_t>(index * n) * sizeof(float));
}

Tensor* build_rwkv_channel_mix(ForwardContext& fx, Tensor* x, Tensor* x_prev, const RwkvChannelMixWeights& w,
                               int layer) {
  Graph& g = fx.graph;
  Tensor* sx = g.sub(x_prev, x);
  Tensor* xk = build_lerp(g, x, sx, w.lerp_k);
  Tensor* k = ForwardContext::name(relu_squared(g, g.mul_mat(w.key, xk)), "ffn_key", layer);
  Tensor* out = g.mul_mat(w.value, k);
  if (w.receptance != nullptr) {
    Tensor* xr = build_lerp(g, x, sx, w.lerp_r);
    out = g.mul(g.sigmoid(g.mul_mat(w.receptance, xr)), out);
  }
  return ForwardContext::name(out, "ffn_out", layer);
}

Tensor* build_rwkv_group_norm(ForwardContext& fx, Tensor* y, const NormWeights& ln, int64_t head_size,
                              int layer) {
  Graph& g = fx.graph;
  const int64_t n_embd = y->ne[0], n_tokens = y->ne[1];
  Tensor* heads = g.reshape(y, {head_size, n_embd / head_size, n_tokens, 1});
  Tensor* normed = g.reshape(g.norm(heads, 64e-5f), {n_embd, n_tokens, 1, 1});
  return ForwardContext::name(g.add(g.mul(normed, ln.weight), ln.bias), "wkv_norm", layer);
}

Tensor* build_rwkv(ForwardContext& fx, const RwkvWeights& w, const RwkvOptions& o,
                   const RwkvTimeMix& time_mix) {
  Graph& g = fx.graph;
  const int n_layer = static_cast<int>(w.layers.size());
  Tensor* x = fx.build_norm(fx.build_inp_embd(w.token_embd), w.token_embd_norm, NormKind::kLayer, o.norm_eps,
                            "inp_norm", -1);
  for (int il = 0; il < n_layer; ++il) {
    const RwkvLayerWeights& l = w.layers[static_cast<size_t>(il)];
    Tensor* attn_norm = fx.build_norm(x, l.attn_norm, NormKind::kLayer, o.norm_eps, "attn_norm", il);
    Tensor* attn_prev = build_token_shift(fx, attn_norm, il, kTimeMixShift, "attn_shift");
    Tensor* ffn_inp = ForwardContext::name(g.add(time_mix(fx, attn_norm, attn_prev, il), x), "ffn_inp", il);
    Tensor* ffn_norm = fx.build_norm(ffn_inp, l.ffn_norm, NormKind::kLayer, o.norm_eps, "ffn_norm", il);
    // Every token's row updates the shift's state; only the wanted rows go on.
    Tensor* ffn_prev = build_token_shift(fx, ffn_norm, il, kChannelMixShift, "ffn_shift");
    fx.filter_last_layer(il, n_layer, {&ffn_inp, &ffn_norm, &ffn_prev});
    Tensor* cur = g.add(build_rwkv_channel_mix(fx, ffn_norm, ffn_prev, l.channel_mix, il), ffn_inp);
    const uint32_t every = o.rescale_every_n_layers;
    if (every != 0 && (static_cast<uint32_t>(il) + 1) % every == 0) cur = g.scale(cur, 0.5f);
    x = ForwardContext::name(cur, "l_out", il);
  }
  x = fx.build_norm(x, w.output_norm, NormKind::kLayer, o.norm_eps, "result_norm", -1);
  return fx.build_logits(x, w.output);
}

}  // namespace sinter
