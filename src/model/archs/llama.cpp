// Llama 1/2/3 and Mistral-style models: pre-norm decoder blocks with RMS norm, grouped-query
// attention with rotary embeddings (pairs (2i, 2i+1)), and a SiLU-gated feed-forward network —
// or, in files with expert_count (Mixtral), a mixture of experts: softmax routing, the top k
// renormalized.
#include "model/decoder.h"

namespace sinter {
namespace {

struct LlamaHParams : DecoderHParams {
  MoeHParams moe;  // n_expert 0: dense

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    moe.declare(p, /*required=*/false);
  }
  // Experts only when the dims ask for them (sinter synth llama --n-expert 8).
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    if (d.n_expert > 0) moe.set_synth_dims(d);
    return ok_status();
  }
};

class LlamaModel final : public DecoderModel<LlamaHParams> {
 public:
  static constexpr const char* kArchitecture = "llama";
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
      if (h.moe.n_expert > 0) {
        l.moe = bind_moe(b, il, h.n_embd, h.n_ff, h.moe.n_expert);
      } else {
        l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {});
      }
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/false, rope_freqs));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/false),
                         {.block = {.norm_eps = h.norm_eps, .moe = h.moe.options(/*normalize=*/true)}});
  }
};

const ArchitectureRegistration kLlama{Architecture{
    LlamaModel::kArchitecture,
    LlamaModel::create<LlamaModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<LlamaHParams>(LlamaModel::kArchitecture, dims, out, [](LlamaHParams&) {});
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"medium", {512, 4, 8, 4, 1536, 4096, 2048}},
        {"1b", {2048, 16, 32, 8, 8192, 32000, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
