// Qwen 3 (dense): Qwen 2's blocks without the Q/K/V biases, with an RMS norm of each query and
// key head (over head_dim, before RoPE), and a head size of its own (attention.key_length).
#include <algorithm>

#include "model/decoder.h"

namespace sinter {
namespace {

class Qwen3Model final : public DecoderModel<DecoderHParams> {
 public:
  static constexpr const char* kArchitecture = "qwen3";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .qk_norm = Presence::kRequired});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {});
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/true), {.block = {.norm_eps = h.norm_eps}});
  }
};

const ArchitectureRegistration kQwen3{Architecture{
    Qwen3Model::kArchitecture,
    Qwen3Model::create<Qwen3Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<DecoderHParams>(Qwen3Model::kArchitecture, dims, out, [](DecoderHParams& h) {
        h.norm_eps = 1e-6f;
        h.rope.freq_base = 1000000.0f;
        // A head size of its own (attention.key_length), as Qwen 3's 128 over 1024 / 16 in the
        // 0.6B model: small presets get twice n_embd / n_head; sizes of 128 and up stay.
        if (h.head_dim < 128) h.head_dim = h.head_dim_v = h.rope.n_rot = std::min(2 * h.head_dim, 128u);
      });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"1.7b", {2048, 28, 16, 8, 6144, 151936, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
