// Qwen 3 MoE: Qwen 3's attention (an RMS norm of each query and key head before NeoX RoPE) with
// every FFN a mixture of experts: softmax routing over all experts, the top k renormalized.
// An expert's FFN length has a key of its own (default: feed_forward_length / experts used).
#include "model/decoder.h"

namespace sinter {
namespace {

struct Qwen3MoeHParams : DecoderHParams {
  MoeHParams moe;
  uint32_t n_ff_exp = 0;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    moe.declare(p, /*required=*/true);
    const uint32_t per_expert = moe.n_expert_used > 0 ? n_ff / moe.n_expert_used : 0;
    p.optional("{arch}.expert_feed_forward_length", n_ff_exp, per_expert);
    if (p.status() && n_ff_exp == 0) p.fail("the experts' feed-forward length is 0");
  }
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    n_ff_exp = static_cast<uint32_t>(d.n_ff_exp > 0 ? d.n_ff_exp : d.n_ff);
    return ok_status();
  }
};

class Qwen3MoeModel final : public DecoderModel<Qwen3MoeHParams> {
 public:
  static constexpr const char* kArchitecture = "qwen3moe";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qk_norm = Presence::kRequired});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      l.moe = bind_moe(b, il, h.n_embd, h.n_ff_exp, h.moe.n_expert);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/true),
                         {.block = {.norm_eps = h.norm_eps, .moe = h.moe.options(/*normalize=*/true)}});
  }
};

const ArchitectureRegistration kQwen3Moe{Architecture{
    Qwen3MoeModel::kArchitecture,
    Qwen3MoeModel::create<Qwen3MoeModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Qwen3MoeHParams>(Qwen3MoeModel::kArchitecture, dims, out,
                                               [](Qwen3MoeHParams& h) {
                                                 h.norm_eps = 1e-6f;
                                                 h.rope.freq_base = 1000000.0f;
                                               });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512, 8, 2, 64}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024, 8, 2, 128}},
        // Qwen3-30B-A3B's experts (128 experts, 8 used, expert FFN 768) at 16 layers of 2048.
        {"moe-16x2048", {2048, 16, 32, 4, 6144, 151936, 4096, 64, 8, 768}},
    },
}};

}  // namespace
}  // namespace sinter
