#include "model/bert_family.h"

namespace sinter {

void BertHParams::declare(HParams& p, uint32_t vocab) {
  DecoderHParams::declare(p, vocab);
  // llama.cpp refuses a BERT file without a token type count, even one without token_types.
  p.required("tokenizer.ggml.token_type_count", n_token_types);
  p.optional("{arch}.pooling_type", pooling_type, 0u);
  p.optional("{arch}.attention.causal", causal, false);
  if (alibi) p.optional("{arch}.attention.max_alibi_bias", max_alibi_bias, 8.0f);
  if (alibi && !(max_alibi_bias > 0.0f)) p.fail("attention.max_alibi_bias must be positive");
  if (pooling_type > static_cast<uint32_t>(Pooling::kRank))
    p.fail(concat("pooling type ", pooling_type, " is not one of 0 (none) .. 4 (rank)"));
  if (n_token_types == 0) p.fail("the token type count must be positive");
}

void BertFamilyModel::bind(WeightBinder& b) {
  const int64_t n_embd = h.n_embd;
  w.token_embd = b.require("token_embd.weight", {n_embd, h.n_vocab});
  token_types = b.feature("token_types.weight", {n_embd, h.n_token_types});
  if (!variant_.rope && !variant_.jina)
    position_embd = b.require("position_embd.weight", {n_embd, h.n_ctx_train});
  embd_norm = bind_norm(b, "token_embd_norm", -1, n_embd, Presence::kRequired, Presence::kRequired);
  // Converted BERT files hold Q, K and V apart; a file with a fused attn_qkv is bound as one.
  const bool fused = variant_.fused_qkv || b.file_tensor(format_name("blk.%d.attn_qkv.weight", 0)) != nullptr;
  layers.resize(h.n_layer);
  for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
    BertLayer& l = layers[static_cast<size_t>(il)];
    // jina's Q and K norms are LayerNorms over the whole projection, with biases.
    const Presence qk_norm = variant_.jina ? Presence::kFeature : Presence::kAbsent;
    l.attn = bind_attention(b, il, h,
                            {.qkv_bias = variant_.bias,
                             .output_bias = variant_.bias,
                             .qk_norm = qk_norm,
                             .qk_norm_whole = true,
                             .qk_norm_bias = qk_norm,
                             .fused_qkv = fused});
    l.attn_out_norm =
        bind_norm(b, "blk.%d.attn_output_norm", il, n_embd, Presence::kRequired, Presence::kRequired);
    if (variant_.jina) {
      l.attn_norm_2 = bind_norm(b, "blk.%d.attn_norm_2", il, n_embd, Presence::kFeature, Presence::kFeature);
      l.ffn = bind_jina_ffn(b, il);
    } else {
      // A SwiGLU FFN has no biases: llama.cpp's nomic-bert graph uses none (it reads the up and
      // down biases of a file that has them, and leaves them out of the product).
      l.ffn = bind_ffn(
          b, il, n_embd, h.n_ff,
          {.gated = variant_.gated_ffn, .bias = variant_.gated_ffn ? Presence::kAbsent : variant_.bias});
    }
    l.layer_out_norm =
        bind_norm(b, "blk.%d.layer_output_norm", il, n_embd, Presence::kRequired, Presence::kRequired);
  }
  // A classifier's head has a row per label; a reranker reads the first. Synthetic models have one.
  rank_head = variant_.jina ? bind_score_head(b, n_embd, reranker())
                            : bind_rank_head(b, n_embd, reranker(), head_rows(b, 1));
}

FfnWeights BertFamilyModel::bind_jina_ffn(WeightBinder& b, int il) const {
  const int64_t n_embd = h.n_embd, n_ff = h.n_ff;
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  const GgufTensorInfo* up = b.file_tensor(name("blk.%d.ffn_up.weight"));
  const bool split_gate = b.file_tensor(name("blk.%d.ffn_gate.weight")) != nullptr;
  // Synthetic models are written as converters write them now: gate and up in one matrix.
  const bool fused = !split_gate && (up == nullptr || up->shape.size() < 2 || up->shape[1] == 2 * n_ff);
  FfnWeights ffn;
  if (fused) {
    ffn.gate_up = b.require(name("blk.%d.ffn_up.weight"), {n_embd, 2 * n_ff});
    ffn.up_bias = bind_weight(b, name("blk.%d.ffn_up.bias"), {2 * n_ff}, Presence::kFeature);
  } else {
    // The gate has no bias in llama.cpp's graph.
    if (split_gate) ffn.gate = b.require(name("blk.%d.ffn_gate.weight"), {n_embd, n_ff});
    ffn.up = b.require(name("blk.%d.ffn_up.weight"), {n_embd, n_ff});
    ffn.up_bias = bind_weight(b, name("blk.%d.ffn_up.bias"), {n_ff}, Presence::kOptional);
  }
  ffn.down = b.require(name("blk.%d.ffn_down.weight"), {n_ff, n_embd});
  ffn.down_bias = b.require(name("blk.%d.ffn_down.bias"), {n_embd});
  return ffn;
}

ModelShape BertFamilyModel::describe_shape() const {
  ModelShape s = decoder_shape(variant_.architecture);
  s.encoder = true;
  s.causal = h.causal;
  s.pooling = static_cast<Pooling>(h.pooling_type);
  if (reranker()) s.n_rank_outputs = rank_head.outputs(s.n_embd);
  KvRope rope = h.kv_rope(/*neox=*/true);
  rope.rotated = variant_.rope;  // absolute positions or ALiBi: nothing rotates, nothing shifts
  s.kv_rope.assign(h.n_layer, rope);
  return s;
}

Tensor* BertFamilyModel::build_forward(ForwardContext& fx) const {
  Graph& g = fx.graph;
  const int n_layer = static_cast<int>(h.n_layer);
  Tensor* x = fx.build_inp_embd(w.token_embd);
  if (token_types != nullptr) {
    // Every token is of type 0: row 0 [n_embd] broadcast over the batch.
    const size_t row = token_types->nb[1];
    Tensor* type0 =
        g.view(token_types, {token_types->ne[0], 1, 1, 1}, {token_types->nb[0], row, row, row}, 0);
    if (type0->type != DType::F32) type0 = g.copy(type0, DType::F32);
    x = g.add(x, type0);
  }
  if (position_embd != nullptr) x = g.add(g.get_rows(position_embd, fx.positions), x);
  x = fx.build_norm(x, embd_norm, NormKind::kLayer, h.norm_eps, "inp_norm", -1);
  for (int il = 0; il < n_layer; ++il) {
    const BertLayer& l = layers[static_cast<size_t>(il)];
    AttentionOptions attention = h.attention(/*neox=*/true);
    fx.use_layer(attention, shape_, il);
    attention.qk_norm = NormKind::kLayer;
    attention.norm_eps = h.norm_eps;
    attention.max_alibi_bias = h.alibi ? h.max_alibi_bias : 0.0f;
    Tensor* cur = fx.build_attn(x, l.attn, attention, il);
    fx.filter_last_layer(il, n_layer, {&cur, &x});
    cur = g.add(cur, x);
    Tensor* ffn_inp = fx.build_norm(cur, l.attn_out_norm, NormKind::kLayer, h.norm_eps, "attn_out_norm", il);
    if (l.attn_norm_2.weight != nullptr) {
      ffn_inp =
          fx.build_norm(g.add(ffn_inp, x), l.attn_norm_2, NormKind::kLayer, h.norm_eps, "attn_norm_2", il);
    }
    FfnActivation activation = FfnActivation::kGelu;
    if (variant_.gated_ffn) activation = FfnActivation::kSiluGated;
    if (variant_.jina && (l.ffn.gate != nullptr || l.ffn.gate_up != nullptr))
      activation = FfnActivation::kGeluGated;
    cur = fx.build_ffn(ffn_inp, l.ffn, activation, il);
    cur = g.add(cur, ffn_inp);
    x = fx.build_norm(cur, l.layer_out_norm, NormKind::kLayer, h.norm_eps, "layer_out_norm", il);
  }
  x = ForwardContext::name(x, "result_embd");
  return reranker() ? build_rank_head(fx, x, rank_head) : x;
}

Status write_bert_synth_keys(const char* architecture, const SynthDims& dims, Metadata& out,
                             float rope_freq_base, bool alibi) {
  return write_synth_keys<BertHParams>(architecture, dims, out, [&](BertHParams& h) {
    h.alibi = alibi;
    h.max_alibi_bias = 8.0f;
    h.norm_eps = 1e-12f;  // BERT's
    h.rope.freq_base = rope_freq_base;
    h.pooling_type = dims.pooling_type >= 0 ? static_cast<uint32_t>(dims.pooling_type)
                                            : static_cast<uint32_t>(Pooling::kMean);
  });
}

}  // namespace sinter
