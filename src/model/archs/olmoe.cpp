// OLMoE: pre-norm blocks, RMS norms of the whole query and key projections before NeoX RoPE,
// and every FFN a mixture of experts: softmax routing, the top k weights used as they are (not
// renormalized).
#include "model/decoder.h"

namespace sinter {
namespace {

struct OlmoeHParams : DecoderHParams {
  MoeHParams moe;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    moe.declare(p, /*required=*/true);
  }
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    return ok_status();
  }
};

class OlmoeModel final : public DecoderModel<OlmoeHParams> {
 public:
  static constexpr const char* kArchitecture = "olmoe";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwn);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qk_norm = Presence::kRequired, .qk_norm_whole = true});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      l.moe = bind_moe(b, il, h.n_embd, h.n_ff, h.moe.n_expert);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/true),
                         {.block = {.norm_eps = h.norm_eps, .moe = h.moe.options(/*normalize=*/false)}});
  }
};

const ArchitectureRegistration kOlmoe{Architecture{
    OlmoeModel::kArchitecture,
    OlmoeModel::create<OlmoeModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<OlmoeHParams>(OlmoeModel::kArchitecture, dims, out, [](OlmoeHParams& h) {
        // llama.cpp binds the key norm as [n_embd]: OLMoE has as many key heads as query heads.
        h.n_head_kv = h.n_head;
      });
    },
    {
        {"tiny", {64, 2, 4, 4, 64, 512, 512, 8, 2}},
        {"small", {256, 2, 8, 8, 128, 1024, 1024, 8, 2}},
        {"1b-7b", {2048, 16, 16, 16, 1024, 50304, 4096, 64, 8}},
    },
}};

}  // namespace
}  // namespace sinter
