// gpt-oss: pre-norm blocks whose attention has biases on every projection, a head size of its own
// (key_length, not n_embd / n_head), a learned sink logit per query head, YaRN-scaled NeoX RoPE
// and a sliding window on the even layers; every FFN is a mixture of experts with a biased
// router, softmax over the chosen experts' logits, biased experts and a clamped SwiGLU
// (swiglu_oai, alpha 1.702, limit 7). The norm after attention is stored as
// post_attention_norm but sits where other models have ffn_norm.
#include "model/decoder.h"

namespace sinter {
namespace {

// The clamped SwiGLU's constants: llama.cpp has them in its graph, not in the file.
constexpr float kSwiGluAlpha = 1.702f;
constexpr float kSwiGluLimit = 7.0f;

struct GptOssHParams : DecoderHParams {
  MoeHParams moe;
  uint32_t n_ff_exp = 0;
  uint32_t sliding_window = 128;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    moe.declare(p, /*required=*/true);
    p.required("{arch}.expert_feed_forward_length", n_ff_exp);
    p.required("{arch}.attention.sliding_window", sliding_window);
    if (p.status() && (n_ff_exp == 0 || sliding_window == 0))
      p.fail("the experts' feed-forward length and the sliding window must be positive");
  }
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    n_ff_exp = static_cast<uint32_t>(d.n_ff_exp > 0 ? d.n_ff_exp : d.n_ff);
    return ok_status();
  }
};

class GptOssModel final : public DecoderModel<GptOssHParams> {
 public:
  static constexpr const char* kArchitecture = "gpt-oss";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwn);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn =
          bind_attention(b, il, h, {.qkv_bias = Presence::kRequired, .output_bias = Presence::kRequired});
      l.attn.sinks = b.require(format_name("blk.%d.attn_sinks.weight", il), {h.n_head});
      l.ffn_norm = bind_norm(b, "blk.%d.post_attention_norm", il, h.n_embd, Presence::kRequired);
      l.moe = bind_moe(b, il, h.n_embd, h.n_ff_exp, h.moe.n_expert);
      bind_moe_biases(b, il, l.moe, h.n_embd, h.n_ff_exp, h.moe.n_expert);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    set_sliding_windows(s, sliding_window_layers(h.n_layer, /*period=*/2),
                        static_cast<int32_t>(h.sliding_window));
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    MoeOptions moe = h.moe.options(/*normalize=*/false);
    moe.gating = MoeGating::kSoftmaxOfChosen;
    moe.swiglu_alpha = kSwiGluAlpha;
    moe.swiglu_limit = kSwiGluLimit;
    return build_decoder(fx, shape_, w, h.attention(/*neox=*/true),
                         {.block = {.norm_eps = h.norm_eps, .moe = moe}});
  }
};

const ArchitectureRegistration kGptOss{Architecture{
    GptOssModel::kArchitecture,
    GptOssModel::create<GptOssModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<GptOssHParams>(GptOssModel::kArchitecture, dims, out, [](GptOssHParams& h) {
        h.norm_eps = 1e-5f;
        // A head size of its own, as gpt-oss's 64 against 2880 / 64 = 45: n_embd / n_head + 16,
        // rounded up to a multiple of 16.
        h.head_dim = h.head_dim_v = (h.n_embd / h.n_head + 16 + 15) / 16 * 16;
        h.rope.n_rot = h.head_dim;
        h.rope.freq_base = 150000.0f;
        h.rope.scaling_type = "yarn";
        h.rope.scaling_factor = 32.0f;
        h.rope.original_context = 4096;
        // A window that test sequences (64+ tokens) cross; gpt-oss's own is 128.
        h.sliding_window = h.n_ctx_train >= 4096 ? 128 : 16;
      });
    },
    {
        {"tiny", {64, 2, 4, 2, 64, 512, 512, 8, 2, 64}},
        {"small", {256, 2, 8, 4, 128, 1024, 1024, 8, 2, 128}},
        // gpt-oss-20b's experts (32, 4 used, expert FFN 2880) at 12 of its 24 layers.
        {"20b-half", {2880, 12, 64, 8, 2880, 201088, 4096, 32, 4, 2880}},
    },
}};

}  // namespace
}  // namespace sinter
