// Granite 3.x: Llama's blocks with four multipliers: the embeddings, each residual branch, the
// attention scores (instead of 1/√head_dim) and the logits (divided). "granitemoe" files have
// the same blocks with a mixture of experts for every FFN (softmax routing, the top k
// renormalized) and, where expert_shared_feed_forward_length is set, a shared expert added.
#include "model/decoder.h"

namespace sinter {
namespace {

struct GraniteHParams : DecoderHParams {
  float embedding_scale = 0.0f;  // 0: none
  float residual_scale = 0.0f;   // 0: none
  float attention_scale = 0.0f;  // 0: 1/√head_dim
  float logit_scale = 1.0f;      // logits are divided by it
  MoeHParams moe;                // granitemoe
  uint32_t n_ff_shared = 0;      // granitemoe's shared expert; 0: none

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    if (p.architecture() == "granitemoe") {
      moe.declare(p, /*required=*/true);
      p.optional("{arch}.expert_shared_feed_forward_length", n_ff_shared, 0u);
    }
    p.optional("{arch}.embedding_scale", embedding_scale, 0.0f);
    p.optional("{arch}.residual_scale", residual_scale, 0.0f);
    p.optional("{arch}.attention.scale", attention_scale, 0.0f);
    p.required("{arch}.logit_scale", logit_scale);
    if (logit_scale == 0.0f) p.fail("logit_scale must not be 0 (logits are divided by it)");
  }
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    return ok_status();
  }
};

// Granite (dense) and Granite MoE: one model, named by `kMoe`.
template <bool kMoe>
class GraniteModel final : public DecoderModel<GraniteHParams> {
 public:
  static constexpr const char* kArchitecture = kMoe ? "granitemoe" : "granite";
  Tensor* rope_freqs = nullptr;

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    rope_freqs = b.optional("rope_freqs.weight", {int64_t{h.rope.n_rot} / 2});
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn =
          bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .output_bias = Presence::kOptional});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      if (!kMoe) {
        l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {.bias = Presence::kOptional});
        continue;
      }
      l.moe = bind_moe(b, il, h.n_embd, h.n_ff, h.moe.n_expert);
      if (h.n_ff_shared > 0) l.moe.shared = bind_shared_experts(b, il, h.n_embd, h.n_ff_shared);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/false, rope_freqs));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    AttentionOptions attention = h.attention(/*neox=*/false);
    attention.scale = h.attention_scale;
    const auto or_one = [](float s) { return s != 0.0f ? s : 1.0f; };
    return build_decoder(fx, shape_, w, attention,
                         {.embedding_scale = or_one(h.embedding_scale),
                          .block = {.norm_eps = h.norm_eps,
                                    .residual_scale = or_one(h.residual_scale),
                                    .moe = h.moe.options(/*normalize=*/true)},
                          .logit_scale = 1.0f / h.logit_scale});
  }
};

// Every multiplier away from 1, none so small that the logits flatten (which would hide a wrong
// one from a probability comparison).
void set_synth_multipliers(GraniteHParams& h) {
  h.norm_eps = 1e-5f;
  h.embedding_scale = 4.0f;
  h.residual_scale = 0.5f;
  h.attention_scale = 0.3f;
  h.logit_scale = 1.5f;
}

const ArchitectureRegistration kGranite{Architecture{
    GraniteModel<false>::kArchitecture,
    GraniteModel<false>::create<GraniteModel<false>>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<GraniteHParams>(GraniteModel<false>::kArchitecture, dims, out,
                                              set_synth_multipliers);
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"2b", {2048, 40, 32, 8, 8192, 49155, 4096}},
    },
}};

const ArchitectureRegistration kGraniteMoe{Architecture{
    GraniteModel<true>::kArchitecture,
    GraniteModel<true>::create<GraniteModel<true>>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<GraniteHParams>(GraniteModel<true>::kArchitecture, dims, out,
                                              [](GraniteHParams& h) {
                                                set_synth_multipliers(h);
                                                h.n_ff_shared = h.n_ff;  // the shared expert too
                                              });
    },
    {
        {"tiny", {64, 2, 4, 2, 64, 512, 512, 8, 2}},
        {"small", {256, 2, 8, 4, 128, 1024, 1024, 8, 2}},
        {"3b-a800m", {1536, 32, 24, 8, 512, 49155, 4096, 40, 8}},
    },
}};

}  // namespace
}  // namespace sinter
