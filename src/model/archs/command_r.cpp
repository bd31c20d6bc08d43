// Command R (Cohere): parallel blocks (attention and the SiLU-gated FFN both read one LayerNorm
// of the input, and both add to it), rotary embeddings on pairs (2i, 2i+1), the embedding matrix
// as output, and logits multiplied by logit_scale. Command R+ (64 layers or more) adds a
// LayerNorm of each query and key head, with weights per head.
#include "model/decoder.h"

namespace sinter {
namespace {

struct CommandRHParams : DecoderHParams {
  float logit_scale = 1.0f;

  CommandRHParams() { norm = NormKind::kLayer; }
  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.optional("{arch}.logit_scale", logit_scale, 1.0f);
  }
};

class CommandRModel final : public DecoderModel<CommandRHParams> {
 public:
  static constexpr const char* kArchitecture = "command-r";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kTied);
    const bool head_norms = h.n_layer >= 64;  // as llama.cpp decides (Command R+)
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional});
      if (head_norms) {
        l.attn.q_norm = b.require(format_name("blk.%d.attn_q_norm.weight", il), {h.head_dim, h.n_head});
        l.attn.k_norm = b.require(format_name("blk.%d.attn_k_norm.weight", il), {h.head_dim, h.n_head_kv});
      }
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {});
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/false));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/false),
                         {.block = {.norm = NormKind::kLayer, .norm_eps = h.norm_eps, .parallel = true},
                          .logit_scale = h.logit_scale});
  }
};

const ArchitectureRegistration kCommandR{Architecture{
    CommandRModel::kArchitecture,
    CommandRModel::create<CommandRModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<CommandRHParams>(
          CommandRModel::kArchitecture, dims, out, [](CommandRHParams& h) {
            h.logit_scale = 1.5f;  // real files: 0.0625 and kin, which flatten a random model
            h.rope.freq_base = 8000000.0f;
          });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        // Command R+'s per-head Q/K norms, on a narrow model.
        {"plus-tiny", {64, 64, 4, 2, 128, 512, 512}},
        {"7b", {4096, 32, 32, 8, 14336, 256000, 8192}},
    },
}};

}  // namespace
}  // namespace sinter
