// SmolLM3: Llama's blocks in which every fourth layer (3, 7, 11, ...) attends without rotary
// embeddings (NoPE).
#include "model/decoder.h"

namespace sinter {
namespace {

struct SmolLm3HParams : DecoderHParams {
  // Layer il has no RoPE when (il + 1) % step == 0. llama.cpp fixes it at 4 (no key); a file
  // may say otherwise.
  uint32_t no_rope_layer_step = 4;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.optional("{arch}.no_rope_layer_step", no_rope_layer_step, 4u);
    if (no_rope_layer_step == 0) p.fail("no_rope_layer_step must be positive");
  }
};

class SmolLm3Model final : public DecoderModel<SmolLm3HParams> {
 public:
  static constexpr const char* kArchitecture = "smollm3";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
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
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/false));
    for (uint32_t il = 0; il < h.n_layer; ++il) s.kv_rope[il].rotated = (il + 1) % h.no_rope_layer_step != 0;
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/false), {.block = {.norm_eps = h.norm_eps}});
  }
};

const ArchitectureRegistration kSmolLm3{Architecture{
    SmolLm3Model::kArchitecture,
    SmolLm3Model::create<SmolLm3Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<SmolLm3HParams>(SmolLm3Model::kArchitecture, dims, out, [](SmolLm3HParams& h) {
        h.norm_eps = 1e-6f;
        h.rope.freq_base = 5000000.0f;
      });
    },
    {
        // Four layers at least, so that one is NoPE.
        {"tiny", {64, 4, 4, 2, 192, 512, 512}},
        {"small", {256, 4, 8, 4, 768, 1024, 1024}},
        {"3b", {2048, 36, 16, 4, 11008, 128256, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
