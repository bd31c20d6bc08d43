#include "model/decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinter {

void DecoderHParams::declare(HParams& p, uint32_t vocab_from_tokenizer) {
  p.required("{arch}.context_length", n_ctx_train);
  p.required("{arch}.embedding_length", n_embd);
  p.block_count("{arch}.block_count", n_layer);
  if (ff_per_layer) {
    p.per_layer("{arch}.feed_forward_length", n_ff_layers, n_layer, 0);
    n_ff = 0;
    for (uint32_t ff : n_ff_layers) n_ff = std::max(n_ff, ff);
  } else if (ff_optional) {
    p.optional("{arch}.feed_forward_length", n_ff, 0u);
  } else {
    p.required("{arch}.feed_forward_length", n_ff);
  }
  p.required("{arch}.attention.head_count", n_head);
  if (!p.status()) return;
  // The heads' sizes default to n_embd / n_head; files that give both need no divisibility
  // (Falcon-H1-1.5B-Deep: 6 heads of 64 beside an n_embd of 1280).
  const bool sized = p.has("{arch}.attention.key_length") && p.has("{arch}.attention.value_length");
  if (n_head == 0 || (n_embd % n_head != 0 && !sized)) {
    p.fail(concat("embedding length ", n_embd, " is not divisible by ", n_head, " heads"));
    return;
  }
  if (kv_heads_per_layer) {
    declare_kv_heads_per_layer(p);
  } else {
    p.optional("{arch}.attention.head_count_kv", n_head_kv, n_head);
  }
  p.optional("{arch}.attention.key_length", head_dim, n_embd / n_head);
  p.optional("{arch}.attention.value_length", head_dim_v, n_embd / n_head);
  p.required(norm == NormKind::kRms ? "{arch}.attention.layer_norm_rms_epsilon"
                                    : "{arch}.attention.layer_norm_epsilon",
             norm_eps);
  p.optional("{arch}.vocab_size", n_vocab, vocab_from_tokenizer);
  rope.declare(p, head_dim);
  if ((n_head_kv == 0 && !kv_heads_per_layer) || (n_head_kv != 0 && n_head % n_head_kv != 0)) {
    p.fail(concat(n_head, " query heads cannot be grouped over ", n_head_kv, " key/value heads"));
  }
  if (n_vocab == 0)
    p.fail("the vocabulary size is unknown (no {arch}.vocab_size and no tokenizer.ggml.tokens)");
  if (n_layer == 0 || (n_ff == 0 && !ff_optional) || n_ctx_train == 0)
    p.fail("block count, feed-forward length and context length must be positive");
  if (head_dim == 0 || head_dim_v == 0) p.fail("attention key and value lengths must be positive");
  if (rope.n_rot > head_dim)
    p.fail(concat("rope dimension count ", rope.n_rot, " exceeds the head size ", head_dim));
}

void DecoderHParams::declare_kv_heads_per_layer(HParams& p) {
  p.per_layer("{arch}.attention.head_count_kv", n_head_kv_layers, n_layer, n_head);
  if (p.mode() == HParams::Mode::kRead) n_head_kv = 0;
  for (uint32_t heads : n_head_kv_layers) {
    if (heads == 0) continue;
    if (n_head_kv != 0 && heads != n_head_kv && p.mode() == HParams::Mode::kRead) {
      p.fail(concat("attention layers with ", n_head_kv, " and ", heads,
                    " key/value heads (sinter needs the same count in every attention layer)"));
      return;
    }
    n_head_kv = heads;
  }
}

Status DecoderHParams::set_synth_dims(const SynthDims& d) {
  n_vocab = static_cast<uint32_t>(d.n_vocab);
  n_ctx_train = static_cast<uint32_t>(d.n_ctx);
  n_embd = static_cast<uint32_t>(d.n_embd);
  n_layer = static_cast<uint32_t>(d.n_layer);
  n_ff = static_cast<uint32_t>(d.n_ff);
  n_head = static_cast<uint32_t>(d.n_head);
  n_head_kv = static_cast<uint32_t>(d.n_head_kv);
  if (n_head == 0 || n_embd % n_head != 0) {
    return make_error(ErrorCode::kInvalidArgument, "n_embd ", n_embd, " is not divisible by n_head ", n_head);
  }
  head_dim = head_dim_v = n_embd / n_head;
  rope.n_rot = head_dim;
  rope.freq_base = 10000.0f;
  return ok_status();
}

AttentionOptions DecoderHParams::attention(bool neox) const {
  AttentionOptions o;
  o.n_head = static_cast<int32_t>(n_head);
  o.n_head_kv = static_cast<int32_t>(n_head_kv);
  o.head_dim = static_cast<int32_t>(head_dim);
  o.head_dim_v = static_cast<int32_t>(head_dim_v);
  o.rope = rope.params(neox, n_ctx_train);
  o.norm_eps = norm_eps;
  o.qk_norm = norm;
  return o;
}

std::vector<bool> sliding_window_layers(uint32_t n_layer, uint32_t period, bool dense_first) {
  std::vector<bool> out(n_layer);
  for (uint32_t il = 0; il < n_layer; ++il) {
    out[il] = period == 0 || (dense_first ? il % period != 0 : il % period < period - 1);
  }
  return out;
}

void set_sliding_windows(ModelShape& shape, const std::vector<bool>& windowed, int32_t window) {
  shape.kv_windows.assign(windowed.size(), 0);
  for (size_t il = 0; il < windowed.size(); ++il) {
    if (windowed[il] && window > 0) shape.kv_windows[il] = window;
  }
}

void set_local_rope(ModelShape& shape, const std::vector<bool>& windowed, float freq_base) {
  for (size_t il = 0; il < windowed.size() && il < shape.kv_rope.size(); ++il) {
    if (!windowed[il]) continue;
    RopeParams& local = shape.kv_rope[il].params;
    local.freq_base = freq_base;
    local.freq_scale = 1.0f;
  }
}

uint32_t tokenizer_vocab_size(const Metadata& metadata) {
  const GgufValue* tokens = metadata.find_value("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->type != GgufType::kArray) return 0;
  const size_t size = std::get<GgufArray>(tokens->data).size();  // beyond int32: an error in HParams
  return static_cast<uint32_t>(std::min<size_t>(size, std::numeric_limits<uint32_t>::max()));
}

Tensor* bind_weight(WeightBinder& b, const std::string& name, std::vector<int64_t> shape, Presence presence) {
  switch (presence) {
    case Presence::kAbsent: return nullptr;
    case Presence::kOptional: return b.optional(name, std::move(shape));
    case Presence::kFeature: return b.feature(name, std::move(shape));
    case Presence::kRequired: return b.require(name, std::move(shape));
  }
  return nullptr;
}

NormWeights bind_norm(WeightBinder& b, const char* pattern, int layer, int64_t n, Presence weight,
                      Presence bias) {
  const std::string base = layer >= 0 ? format_name(pattern, layer) : std::string(pattern);
  return {bind_weight(b, base + ".weight", {n}, weight), bind_weight(b, base + ".bias", {n}, bias)};
}

AttentionWeights bind_attention(WeightBinder& b, int il, const DecoderHParams& h, const AttentionBinding& o) {
  const int64_t n_embd = h.n_embd, q = h.q_width(), k = h.k_width(), v = h.v_width();
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  AttentionWeights w;
  if (o.fused_qkv) {
    w.qkv = b.require(name("blk.%d.attn_qkv.weight"), {n_embd, q + k + v});
    w.qkv_bias = bind_weight(b, name("blk.%d.attn_qkv.bias"), {q + k + v}, o.qkv_bias);
  } else {
    w.q = b.require(name("blk.%d.attn_q.weight"), {n_embd, q});
    w.k = b.require(name("blk.%d.attn_k.weight"), {n_embd, k});
    w.v = b.require(name("blk.%d.attn_v.weight"), {n_embd, v});
    w.q_bias = bind_weight(b, name("blk.%d.attn_q.bias"), {q}, o.qkv_bias);
    w.k_bias = bind_weight(b, name("blk.%d.attn_k.bias"), {k}, o.qkv_bias);
    w.v_bias = bind_weight(b, name("blk.%d.attn_v.bias"), {v}, o.qkv_bias);
  }
  w.output = b.require(name("blk.%d.attn_output.weight"), {int64_t{h.n_head} * h.head_dim_v, n_embd});
  w.output_bias = bind_weight(b, name("blk.%d.attn_output.bias"), {n_embd}, o.output_bias);
  const int64_t head = h.head_dim;
  const std::vector<int64_t> q_norm = o.qk_norm_whole ? std::vector<int64_t>{q} : std::vector<int64_t>{head};
  const std::vector<int64_t> k_norm = o.qk_norm_whole ? std::vector<int64_t>{k} : std::vector<int64_t>{head};
  w.q_norm = bind_weight(b, name("blk.%d.attn_q_norm.weight"), q_norm, o.qk_norm);
  w.k_norm = bind_weight(b, name("blk.%d.attn_k_norm.weight"), k_norm, o.qk_norm);
  w.q_norm_bias = bind_weight(b, name("blk.%d.attn_q_norm.bias"), q_norm, o.qk_norm_bias);
  w.k_norm_bias = bind_weight(b, name("blk.%d.attn_k_norm.bias"), k_norm, o.qk_norm_bias);
  return w;
}

FfnWeights bind_ffn(WeightBinder& b, int il, int64_t n_embd, int64_t n_ff, const FfnBinding& o) {
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  FfnWeights w;
  if (o.fused_gate_up) {
    w.gate_up = b.require(name("blk.%d.ffn_up.weight"), {n_embd, 2 * n_ff});
  } else {
    if (o.gated) w.gate = b.require(name("blk.%d.ffn_gate.weight"), {n_embd, n_ff});
    w.up = b.require(name("blk.%d.ffn_up.weight"), {n_embd, n_ff});
    if (o.gated) w.gate_bias = bind_weight(b, name("blk.%d.ffn_gate.bias"), {n_ff}, o.bias);
    w.up_bias = bind_weight(b, name("blk.%d.ffn_up.bias"), {n_ff}, o.bias);
  }
  w.down = b.require(name("blk.%d.ffn_down.weight"), {n_ff, n_embd});
  w.down_bias = bind_weight(b, name("blk.%d.ffn_down.bias"), {n_embd}, o.bias);
  return w;
}

}  // namespace sinter
