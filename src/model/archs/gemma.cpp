// Gemma (1): embeddings scaled by √n_embd, pre-norm blocks with a GELU-gated feed-forward
// network, NeoX rotary embeddings, and the embedding matrix as the output (always tied).
// Norm weights are stored as 1 + w by the converter: the runtime multiplies by them directly.
#include <cmath>

#include "model/decoder.h"

namespace sinter {
namespace {

class GemmaModel final : public DecoderModel<DecoderHParams> {
 public:
  static constexpr const char* kArchitecture = "gemma";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kTied);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional});
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
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/true),
                         {.embedding_scale = std::sqrt(static_cast<float>(h.n_embd)),
                          .block = {.norm_eps = h.norm_eps, .activation = FfnActivation::kGeluGated}});
  }
};

const ArchitectureRegistration kGemma{Architecture{
    GemmaModel::kArchitecture,
    GemmaModel::create<GemmaModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<DecoderHParams>(GemmaModel::kArchitecture, dims, out,
                                              [](DecoderHParams& h) { h.norm_eps = 1e-6f; });
    },
    {
        {"tiny", {64, 2, 4, 1, 192, 512, 512}},
        {"small", {256, 2, 8, 1, 768, 1024, 1024}},
        {"2b", {2048, 18, 8, 1, 16384, 256000, 8192}},
    },
}};

}  // namespace
}  // namespace sinter
