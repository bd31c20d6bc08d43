// ModernBERT (llama.cpp's LLM_ARCH_MODERN_BERT: ModernBERT, gte-modernbert, Granite Embedding
// R2): an encoder of pre-norm blocks with LayerNorms without biases and no biases anywhere,
//
//   x = LN(token_embd[ids]);   h = x + attn(LN(x));   out = h + ffn(LN(h));   LN(out) at the end
//
// (layer 0's attention norm is absent in converted files: identity). One fused attn_qkv
// projection, NeoX RoPE, a GeGLU feed-forward network whose ffn_up [n_embd, 2·n_ff] holds the
// gate's rows then up's (SwiGLU when `{arch}.hidden_activation` says silu). With
// `{arch}.attention.sliding_window` set, all layers but every third from layer 0 attend within
// a symmetric window (W/2 positions on either side) with a RoPE base of their own
// (rope.freq_base_swa, 10000). The hidden states are pooled by the runtime.
#include <string>

#include "model/decoder.h"

namespace sinter {
namespace {

struct ModernBertHParams : DecoderHParams {
  uint32_t sliding_window = 0;  // 0: every layer global
  uint32_t sliding_window_period = 3;
  float rope_freq_base_swa = 10000.0f;
  uint32_t pooling_type = 0;  // Pooling: 0 none, 1 mean, 2 CLS, 3 last
  bool causal = false;        // converters write false (llama.cpp's default without the key: true)
  std::string hidden_act = "gelu";

  ModernBertHParams() { norm = NormKind::kLayer; }

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.optional("{arch}.attention.sliding_window", sliding_window, 0u);
    p.optional("{arch}.attention.sliding_window_pattern", sliding_window_period, 3u);
    p.optional("{arch}.rope.freq_base_swa", rope_freq_base_swa, 10000.0f);
    p.optional("{arch}.pooling_type", pooling_type, 0u);
    p.optional("{arch}.attention.causal", causal, false);
    p.optional("{arch}.hidden_activation", hidden_act, std::string("gelu"));
    if (rope_freq_base_swa <= 0.0f) p.fail("rope.freq_base_swa must be positive");
    if (pooling_type >= static_cast<uint32_t>(Pooling::kRank)) {
      p.fail(concat("pooling type ", pooling_type,
                    " is not one of 0 (none) .. 3 (last): sinter has no ModernBERT classification head"));
    }
    // attn_qkv is [n_embd, 3·n_embd]: as many key/value heads as query heads, of n_embd / n_head.
    if (n_head > 0 &&
        (n_head_kv != n_head || int64_t{n_head} * head_dim != n_embd || head_dim != head_dim_v)) {
      p.fail(concat("ModernBERT's fused QKV needs ", n_head, " key/value heads of ", n_embd / n_head,
                    " values (has ", n_head_kv, " of ", head_dim, ")"));
    }
    if (hidden_act == "relu" || hidden_act == "reglu")
      p.fail(concat("hidden activation ", HParams::quote(hidden_act), " (ReGLU) is not supported"));
  }

  // llama.cpp's llm_ffn_op_type_from_string: silu, swish and swiglu gate with SiLU; gelu, geglu
  // and anything unknown with GELU.
  FfnActivation activation() const {
    const bool silu = hidden_act == "silu" || hidden_act == "swish" || hidden_act == "swiglu";
    return silu ? FfnActivation::kSiluGated : FfnActivation::kGeluGated;
  }
};

struct ModernBertLayer {
  NormWeights attn_norm;  // absent in layer 0: identity
  AttentionWeights attn;
  NormWeights ffn_norm;
  FfnWeights ffn;
};

class ModernBertModel final : public DecoderModel<ModernBertHParams> {
 public:
  static constexpr const char* kArchitecture = "modern-bert";

  NormWeights embd_norm;
  std::vector<ModernBertLayer> layers;

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    w.token_embd = b.require("token_embd.weight", {n_embd, h.n_vocab});
    embd_norm = bind_norm(b, "token_embd_norm", -1, n_embd, Presence::kRequired);
    w.output_norm = bind_norm(b, "output_norm", -1, n_embd, Presence::kRequired);
    layers.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      ModernBertLayer& l = layers[static_cast<size_t>(il)];
      l.attn_norm =
          bind_norm(b, "blk.%d.attn_norm", il, n_embd, il == 0 ? Presence::kOptional : Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.fused_qkv = true});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {.fused_gate_up = true});
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.encoder = true;
    s.causal = h.causal;
    s.pooling = static_cast<Pooling>(h.pooling_type);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    if (h.sliding_window == 0) return s;
    s.window_kind = WindowKind::kSymmetric;
    const std::vector<bool> windowed =
        sliding_window_layers(h.n_layer, h.sliding_window_period, /*dense_first=*/true);
    set_sliding_windows(s, windowed, static_cast<int32_t>(h.sliding_window));
    set_local_rope(s, windowed, h.rope_freq_base_swa);
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Graph& g = fx.graph;
    const int n_layer = static_cast<int>(h.n_layer);
    const float eps = h.norm_eps;
    Tensor* x = fx.build_inp_embd(w.token_embd);
    x = fx.build_norm(x, embd_norm, NormKind::kLayer, eps, "inp_norm", -1);
    for (int il = 0; il < n_layer; ++il) {
      const ModernBertLayer& l = layers[static_cast<size_t>(il)];
      AttentionOptions attention = h.attention(/*neox=*/true);
      fx.use_layer(attention, shape_, il);
      Tensor* cur = x;
      if (l.attn_norm.weight != nullptr)
        cur = fx.build_norm(x, l.attn_norm, NormKind::kLayer, eps, "attn_norm", il);
      cur = fx.build_attn(cur, l.attn, attention, il);
      fx.filter_last_layer(il, n_layer, {&cur, &x});
      Tensor* ffn_inp = ForwardContext::name(g.add(cur, x), "ffn_inp", il);
      cur = fx.build_norm(ffn_inp, l.ffn_norm, NormKind::kLayer, eps, "ffn_norm", il);
      cur = fx.build_ffn(cur, l.ffn, h.activation(), il);
      x = ForwardContext::name(g.add(cur, ffn_inp), "l_out", il);
    }
    return fx.build_norm(x, w.output_norm, NormKind::kLayer, eps, "result_norm", -1);
  }
};

const ArchitectureRegistration kModernBert{Architecture{
    ModernBertModel::kArchitecture,
    ModernBertModel::create<ModernBertModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<ModernBertHParams>(
          ModernBertModel::kArchitecture, dims, out, [&dims](ModernBertHParams& h) {
            h.norm_eps = 1e-5f;
            h.pooling_type = dims.pooling_type >= 0 ? static_cast<uint32_t>(dims.pooling_type)
                                                    : static_cast<uint32_t>(Pooling::kMean);
            h.rope.freq_base = 160000.0f;  // ModernBERT's global base
            // Test sizes: a window that texts of a few dozen tokens cross (8 positions each
            // side); model sizes (a context of 4096 and up): ModernBERT's own 128.
            h.sliding_window = h.n_ctx_train >= 4096 ? 128 : 16;
          });
    },
    {
        {"tiny", {64, 2, 4, 4, 192, 512, 512}},
        {"small", {256, 4, 8, 8, 768, 1024, 1024}},
        {"base", {768, 22, 12, 12, 1152, 50368, 8192}},
    },
    /*encoder=*/true,
}};

}  // namespace
}  // namespace sinter
