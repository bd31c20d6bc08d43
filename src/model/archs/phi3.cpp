// Phi-3, Phi-3.5 and Phi-4-mini: Llama's blocks with Q, K and V in one matrix and the FFN's gate
// and up in one matrix (gate rows first), NeoX rotary embeddings over part of the head, and
// LongRoPE: per-pair frequency factors, the long ones when a sequence's context exceeds the
// original training context, and an attention factor (rope.scaling.attn_factor) that scales
// both queries and keys. A sliding window in the file is reported but not applied, as llama.cpp
// does not apply it either.
#include "model/decoder.h"

namespace sinter {
namespace {

struct Phi3HParams : DecoderHParams {
  uint32_t sliding_window = 0;  // reported, not applied

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.optional("{arch}.attention.sliding_window", sliding_window, 0u);
  }
};

class Phi3Model final : public DecoderModel<Phi3HParams> {
 public:
  static constexpr const char* kArchitecture = "phi3";
  Tensor* rope_freqs = nullptr;
  Tensor* rope_long = nullptr;
  Tensor* rope_short = nullptr;

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    const int64_t pairs = int64_t{h.rope.n_rot} / 2;
    rope_freqs = b.optional("rope_freqs.weight", {pairs});
    rope_long = b.feature("rope_factors_long.weight", {pairs});
    rope_short = b.feature("rope_factors_short.weight", {pairs});
    // Files hold the fused Q/K/V matrix (synthetic models do too), or separate ones.
    const bool fused = b.file() == nullptr || b.file_tensor("blk.0.attn_qkv.weight") != nullptr;
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .fused_qkv = fused});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {.fused_gate_up = true});
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    KvRope rope = h.kv_rope(/*neox=*/true, rope_freqs != nullptr ? rope_freqs : rope_short);
    if (rope_freqs == nullptr && rope_long != nullptr) {
      rope.factors_long = rope_long;
      rope.long_above = rope.params.n_ctx_orig;
    }
    s.kv_rope.assign(h.n_layer, rope);
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/true), {.block = {.norm_eps = h.norm_eps}});
  }
};

const ArchitectureRegistration kPhi3{Architecture{
    Phi3Model::kArchitecture,
    Phi3Model::create<Phi3Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Phi3HParams>(Phi3Model::kArchitecture, dims, out, [](Phi3HParams& h) {
        // Partial rotation (Phi-4-mini rotates 3/4 of each head), LongRoPE with the original
        // context half the training one, and its attention factor √(1 + ln 2 / ln orig).
        h.rope.n_rot = h.head_dim * 3 / 4 / 2 * 2;
        h.rope.original_context = h.n_ctx_train / 2;
        h.rope.attn_factor = 1.19f;
        h.sliding_window = h.n_ctx_train;
      });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"mini", {3072, 32, 32, 32, 8192, 32064, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
