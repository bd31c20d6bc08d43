// Gemma 3 (text): Gemma 2's blocks with an RMS norm of each query and key head before RoPE
// instead of the attention soft-cap; five local (sliding-window) layers to one global by
// default, the local ones with a RoPE base of their own (rope.freq_base_swa, 10000) and no
// scaling, the global ones with the file's base and linear scaling; an optional final soft-cap.
// A file without attention.sliding_window runs every layer global.
#include <cmath>

#include "model/decoder.h"

namespace sinter {
namespace {

struct Gemma3HParams : DecoderHParams {
  uint32_t sliding_window = 0;  // 0: no windowed layers
  uint32_t sliding_window_period = 6;
  float rope_freq_base_swa = 10000.0f;
  float final_softcap = 0.0f;  // 0: none
  float query_scale = 0.0f;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.optional("{arch}.attention.sliding_window", sliding_window, 0u);
    p.optional("{arch}.attention.sliding_window_pattern", sliding_window_period, 6u);
    p.optional("{arch}.rope.freq_base_swa", rope_freq_base_swa, 10000.0f);
    p.optional("{arch}.final_logit_softcapping", final_softcap, 0.0f);
    const float rule = n_layer == 62 && n_head > 0 ? 1.0f / std::sqrt(static_cast<float>(n_embd / n_head))
                                                   : 1.0f / std::sqrt(static_cast<float>(head_dim));
    p.optional("{arch}.attention.scale", query_scale, rule);
    if (rope_freq_base_swa <= 0.0f) p.fail("rope.freq_base_swa must be positive");
  }
};

class Gemma3Model final : public DecoderModel<Gemma3HParams> {
 public:
  static constexpr const char* kArchitecture = "gemma3";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .qk_norm = Presence::kRequired});
      l.attn_post_norm = bind_norm(b, "blk.%d.post_attention_norm", il, h.n_embd, Presence::kRequired);
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {});
      l.ffn_post_norm = bind_norm(b, "blk.%d.post_ffw_norm", il, h.n_embd, Presence::kRequired);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    if (h.sliding_window == 0) return s;  // all global
    const std::vector<bool> windowed = sliding_window_layers(h.n_layer, h.sliding_window_period);
    set_sliding_windows(s, windowed, static_cast<int32_t>(h.sliding_window));
    set_local_rope(s, windowed, h.rope_freq_base_swa);
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    AttentionOptions attention = h.attention(/*neox=*/true);
    attention.scale = h.query_scale;
    return build_decoder(fx, shape_, w, attention,
                         {.embedding_scale = std::sqrt(static_cast<float>(h.n_embd)),
                          .block = {.norm_eps = h.norm_eps, .activation = FfnActivation::kGeluGated},
                          .logit_softcap = h.final_softcap});
  }
};

const ArchitectureRegistration kGemma3{Architecture{
    Gemma3Model::kArchitecture,
    Gemma3Model::create<Gemma3Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Gemma3HParams>(Gemma3Model::kArchitecture, dims, out, [](Gemma3HParams& h) {
        h.norm_eps = 1e-6f;
        // Test sizes: a window a 64-token test crosses; model sizes (a context of 4096 and up):
        // Gemma 3's own 512 and head size 256 (1152 / 4 = 288 in the 1B model, 256 in the file).
        h.sliding_window = h.n_ctx_train >= 4096 ? 512 : 16;
        if (h.head_dim > 256) h.head_dim = h.head_dim_v = h.rope.n_rot = 256;
        h.query_scale = 1.0f / std::sqrt(static_cast<float>(h.head_dim));
        h.rope.freq_base = 1000000.0f;  // global layers, linearly scaled
        h.rope.scaling_type = "linear";
        h.rope.scaling_factor = 8.0f;
        h.final_softcap = h.n_ctx_train >= 4096 ? 0.0f : 3.0f;  // optional; real files have none
        if (h.n_layer < 6) h.sliding_window_period = 2;         // a global layer among few
      });
    },
    {
        {"tiny", {64, 2, 4, 1, 192, 512, 512}},
        {"small", {256, 6, 8, 4, 768, 1024, 1024}},
        {"1b", {1152, 26, 4, 1, 6912, 262144, 8192}},
    },
}};

}  // namespace
}  // namespace sinter
