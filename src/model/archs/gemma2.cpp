// Gemma 2: Gemma's blocks with norms after attention and after the FFN as well as before,
// sliding-window attention on alternating layers (even ones, by default), soft-capped
// attention scores (50) and logits (30), and a query scale of 1/√head_dim, or 1/√(n_embd/n_head)
// for the 27B model (46 layers), which is how llama.cpp recognizes it.
#include <cmath>

#include "model/decoder.h"

namespace sinter {
namespace {

struct Gemma2HParams : DecoderHParams {
  uint32_t sliding_window = 4096;
  uint32_t sliding_window_period = 2;  // layer il is windowed when il % period < period − 1
  float attn_softcap = 50.0f;
  float final_softcap = 30.0f;
  float rope_freq_base_swa = 0.0f;  // the windowed layers' RoPE base; default: rope.freq_base
  float query_scale = 0.0f;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.optional("{arch}.attention.sliding_window", sliding_window, 4096u);
    p.optional("{arch}.attention.sliding_window_pattern", sliding_window_period, 2u);
    p.optional("{arch}.attn_logit_softcapping", attn_softcap, 50.0f);
    p.optional("{arch}.final_logit_softcapping", final_softcap, 30.0f);
    p.optional("{arch}.rope.freq_base_swa", rope_freq_base_swa, rope.freq_base);
    const float rule = n_layer == 46 && n_head > 0 ? 1.0f / std::sqrt(static_cast<float>(n_embd / n_head))
                                                   : 1.0f / std::sqrt(static_cast<float>(head_dim));
    p.optional("{arch}.attention.scale", query_scale, rule);
  }
};

class Gemma2Model final : public DecoderModel<Gemma2HParams> {
 public:
  static constexpr const char* kArchitecture = "gemma2";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kTied);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional});
      l.attn_post_norm = bind_norm(b, "blk.%d.post_attention_norm", il, h.n_embd, Presence::kRequired);
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {});
      l.ffn_post_norm = bind_norm(b, "blk.%d.post_ffw_norm", il, h.n_embd, Presence::kRequired);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    const std::vector<bool> windowed = sliding_window_layers(h.n_layer, h.sliding_window_period);
    set_sliding_windows(s, windowed, static_cast<int32_t>(h.sliding_window));
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    for (uint32_t il = 0; il < h.n_layer; ++il) {
      if (windowed[il]) s.kv_rope[il].params.freq_base = h.rope_freq_base_swa;
    }
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    AttentionOptions attention = h.attention(/*neox=*/true);
    attention.scale = h.query_scale;
    attention.softcap = h.attn_softcap;
    return build_decoder(fx, shape_, w, attention,
                         {.embedding_scale = std::sqrt(static_cast<float>(h.n_embd)),
                          .block = {.norm_eps = h.norm_eps, .activation = FfnActivation::kGeluGated},
                          .logit_softcap = h.final_softcap});
  }
};

const ArchitectureRegistration kGemma2{Architecture{
    Gemma2Model::kArchitecture,
    Gemma2Model::create<Gemma2Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Gemma2HParams>(Gemma2Model::kArchitecture, dims, out, [](Gemma2HParams& h) {
        h.norm_eps = 1e-6f;
        h.sliding_window = h.n_ctx_train >= 4096 ? 4096 : 16;  // test sizes: crossed by 64+ tokens
        h.query_scale = 1.0f / std::sqrt(static_cast<float>(h.head_dim));
        // Soft-caps that bite on a random model's scores and logits.
        h.attn_softcap = 2.0f;
        h.final_softcap = 3.0f;
        h.rope_freq_base_swa = h.rope.freq_base;
      });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 4, 8, 4, 768, 1024, 1024}},
        {"2b", {2304, 26, 8, 4, 9216, 256000, 8192}},
    },
}};

}  // namespace
}  // namespace sinter
