// Qwen 2 / 2.5 (and the DeepSeek-R1 Qwen distills): Llama's pre-norm blocks with biases on the
// Q, K and V projections and NeoX rotary embeddings (pairs (i, i + n_rot/2)).
#include "model/decoder.h"

namespace sinter {
namespace {

class Qwen2Model final : public DecoderModel<DecoderHParams> {
 public:
  static constexpr const char* kArchitecture = "qwen2";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    w.output_bias = b.optional("output.bias", {h.n_vocab});
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kFeature});
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

const ArchitectureRegistration kQwen2{Architecture{
    Qwen2Model::kArchitecture,
    Qwen2Model::create<Qwen2Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<DecoderHParams>(Qwen2Model::kArchitecture, dims, out, [](DecoderHParams& h) {
        h.norm_eps = 1e-6f;
        h.rope.freq_base = 1000000.0f;
      });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"0.5b", {896, 24, 14, 2, 4864, 151936, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
