// StarCoder2: pre-norm blocks with LayerNorms that have biases, biases on every projection, a
// plain (non-gated) GELU feed-forward network, NeoX rotary embeddings.
#include "model/decoder.h"

namespace sinter {
namespace {

struct StarCoder2HParams : DecoderHParams {
  StarCoder2HParams() { norm = NormKind::kLayer; }
};

class StarCoder2Model final : public DecoderModel<StarCoder2HParams> {
 public:
  static constexpr const char* kArchitecture = "starcoder2";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied, Presence::kRequired);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kFeature, .output_bias = Presence::kRequired});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired, Presence::kRequired);
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {.gated = false, .bias = Presence::kRequired});
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(
        fx, shape_, w, h.attention(/*neox=*/true),
        {.block = {.norm = NormKind::kLayer, .norm_eps = h.norm_eps, .activation = FfnActivation::kGelu}});
  }
};

const ArchitectureRegistration kStarCoder2{Architecture{
    StarCoder2Model::kArchitecture,
    StarCoder2Model::create<StarCoder2Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<StarCoder2HParams>(StarCoder2Model::kArchitecture, dims, out,
                                                 [](StarCoder2HParams& h) { h.rope.freq_base = 100000.0f; });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"3b", {3072, 30, 24, 2, 12288, 49152, 16384}},
    },
}};

}  // namespace
}  // namespace sinter
