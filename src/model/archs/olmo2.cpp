// OLMo 2: post-norm blocks (an RMS norm on the attention's and the FFN's output, none before),
// RMS norms of the whole query and key projections (over all heads, before RoPE), NeoX rotary
// embeddings, its own output matrix. OLMo 3's files add sliding-window attention on three
// layers of four, whose RoPE is unscaled.
#include "model/decoder.h"

namespace sinter {
namespace {

struct Olmo2HParams : DecoderHParams {
  uint32_t sliding_window = 0;  // 0: none (OLMo 2)
  uint32_t sliding_window_period = 4;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.optional("{arch}.attention.sliding_window", sliding_window, 0u);
    p.optional("{arch}.attention.sliding_window_pattern", sliding_window_period, 4u);
  }
};

class Olmo2Model final : public DecoderModel<Olmo2HParams> {
 public:
  static constexpr const char* kArchitecture = "olmo2";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwn);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn = bind_attention(b, il, h, {.qk_norm = Presence::kRequired, .qk_norm_whole = true});
      l.attn_post_norm = bind_norm(b, "blk.%d.post_attention_norm", il, h.n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {});
      l.ffn_post_norm = bind_norm(b, "blk.%d.post_ffw_norm", il, h.n_embd, Presence::kRequired);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    if (h.sliding_window == 0) return s;
    const std::vector<bool> windowed = sliding_window_layers(h.n_layer, h.sliding_window_period);
    set_sliding_windows(s, windowed, static_cast<int32_t>(h.sliding_window));
    for (uint32_t il = 0; il < h.n_layer; ++il) {
      if (!windowed[il]) continue;
      RopeParams& local = s.kv_rope[il].params;  // unscaled, no YaRN
      local.freq_scale = 1.0f;
      local.ext_factor = 0.0f;
      local.attn_factor = 1.0f;
    }
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/true), {.block = {.norm_eps = h.norm_eps}});
  }
};

const ArchitectureRegistration kOlmo2{Architecture{
    Olmo2Model::kArchitecture,
    Olmo2Model::create<Olmo2Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Olmo2HParams>(Olmo2Model::kArchitecture, dims, out, [](Olmo2HParams& h) {
        h.norm_eps = 1e-6f;
        h.rope.freq_base = 500000.0f;
      });
    },
    {
        {"tiny", {64, 2, 4, 4, 192, 512, 512}},
        {"small", {256, 2, 8, 8, 768, 1024, 1024}},
        {"1b", {2048, 16, 16, 16, 8192, 100352, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
