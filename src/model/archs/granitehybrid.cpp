// Granite 4.0-H / 4.1 hybrids ("granitehybrid"): Granite's pre-norm blocks whose first branch is
// either a Mamba-2 layer (model/mamba_layer.h) or grouped-query attention, each followed by a
// SwiGLU FFN or, where the file has experts, Granite MoE's mixture (softmax routing, the top k
// renormalized, a shared expert where expert_shared_feed_forward_length is set):
//
//   h = x + s·op(attn_norm(x))      op: Mamba-2 or attention
//   out = h + s·ffn(ffn_norm(h))    s: residual_scale
//
// As llama.cpp reads it, attention.head_count_kv has one value per layer and 0 marks a Mamba-2
// layer. Granite's multipliers apply: the embeddings, each residual branch, the attention scores
// (attention.scale instead of 1/√head_dim) and the logits (divided by logit_scale), each only
// where its key is set. rope.scaling.finetuned switches RoPE: Granite 4.0-H's converter writes
// false (its attention layers use no positions at all, NoPE), Bamba's true (the default).
//
// The memory is a hybrid: the KV cache has the attention layers (numbered among themselves) and
// the recurrent state the Mamba-2 layers' convolution and scan states (numbered likewise).
#include <algorithm>

#include "model/decoder.h"
#include "model/mamba_layer.h"

namespace sinter {
namespace {

constexpr MambaVersion kVersion = MambaVersion::k2;

struct GraniteHybridHParams : DecoderHParams {
  float embedding_scale = 0.0f;  // 0: none
  float residual_scale = 0.0f;   // 0: none
  float attention_scale = 0.0f;  // 0: 1/√head_dim
  float logit_scale = 0.0f;      // logits are divided by it; 0: none
  bool rope_enabled = true;      // rope.scaling.finetuned
  SsmHParams ssm;
  MoeHParams moe;            // n_expert 0: a dense FFN in every block
  uint32_t n_ff_shared = 0;  // the shared expert's length; 0: none

  void declare(HParams& p, uint32_t vocab) {
    kv_heads_per_layer = true;
    DecoderHParams::declare(p, vocab);
    ssm.declare(p, kVersion);
    moe.declare(p, /*required=*/false);
    if (moe.n_expert > 0 || p.mode() == HParams::Mode::kRead)
      p.optional("{arch}.expert_shared_feed_forward_length", n_ff_shared, 0u);
    p.optional("{arch}.embedding_scale", embedding_scale, 0.0f);
    p.optional("{arch}.residual_scale", residual_scale, 0.0f);
    p.optional("{arch}.attention.scale", attention_scale, 0.0f);
    p.optional("{arch}.logit_scale", logit_scale, 0.0f);
    p.optional("{arch}.rope.scaling.finetuned", rope_enabled, true);
    if (!p.status()) return;
    if (head_dim != head_dim_v) p.fail("attention key and value lengths must be equal");
    if (moe.n_expert == 0 && n_ff_shared != 0) p.fail("a shared expert without experts");
  }

  // SynthDims' heads are the attention layers'; the Mamba-2 layers have heads of 64 (Granite
  // 4.0-H's) in one group, a state of n_embd / 4. Experts where the dims have them, except in
  // the "bamba" variant (dense FFNs).
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    const auto inner = static_cast<uint32_t>(2 * d.n_embd);
    ssm.set_synth_dims(kVersion, static_cast<uint32_t>(d.n_embd), std::max(1u, inner / 64), 1);
    if (inner % ssm.dt_rank != 0) {
      return make_error(ErrorCode::kInvalidArgument, "granitehybrid: the inner size ", inner,
                        " must divide into heads of 64");
    }
    if (d.n_expert > 0 && d.variant != "bamba") moe.set_synth_dims(d);
    return ok_status();
  }

  AttentionOptions attention_options() const {
    AttentionOptions o = attention(/*neox=*/false);
    o.scale = attention_scale;
    o.use_rope = rope_enabled;
    return o;
  }
};

class GraniteHybridModel final : public DecoderModel<GraniteHybridHParams> {
 public:
  static constexpr const char* kArchitecture = "granitehybrid";
  Tensor* rope_freqs = nullptr;
  std::vector<HybridLayer> layers;  // per block
  std::vector<Mamba2Weights> ssm;   // per block (empty for attention blocks)

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    bind_embeddings(b, Output::kOwnOrTied);
    rope_freqs = b.optional("rope_freqs.weight", {int64_t{h.rope.n_rot} / 2});
    ssm.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      const bool attention = h.has_attention(static_cast<uint32_t>(il));
      add_hybrid_layer(layers, attention);
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      if (attention) {
        l.attn =
            bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .output_bias = Presence::kOptional});
      } else {
        ssm[static_cast<size_t>(il)] = bind_mamba2(b, il, n_embd, h.ssm);
      }
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, n_embd, Presence::kRequired);
      if (h.moe.n_expert == 0) {
        l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {.bias = Presence::kOptional});
        continue;
      }
      l.moe = bind_moe(b, il, n_embd, h.n_ff, h.moe.n_expert);
      if (h.n_ff_shared > 0) l.moe.shared = bind_shared_experts(b, il, n_embd, h.n_ff_shared);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_layers.clear();
    s.kv_windows.clear();
    for (const HybridLayer& layer : layers) {
      if (layer.attention) {
        s.kv_layers.push_back(h.kv_layer());
        s.kv_windows.push_back(0);
        KvRope rope = h.kv_rope(/*neox=*/false, rope_freqs);
        rope.rotated = h.rope_enabled;
        s.kv_rope.push_back(rope);
      } else {
        s.recurrent_layers.push_back(h.ssm.layer_state(kVersion));
      }
    }
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Graph& g = fx.graph;
    const auto or_one = [](float s) { return s != 0.0f ? s : 1.0f; };
    Tensor* x = fx.build_inp_embd(w.token_embd);
    if (h.embedding_scale != 0.0f) x = ForwardContext::name(g.scale(x, h.embedding_scale), "inp_scaled");
    AttentionOptions attention = h.attention_options();
    const BlockOptions block{.norm_eps = h.norm_eps,
                             .residual_scale = or_one(h.residual_scale),
                             .moe = h.moe.options(/*normalize=*/true)};
    BlockOptions ssm_block = block;
    ssm_block.attention = [this](ForwardContext& f, Tensor* in, const AttentionOptions&, int il) {
      const auto at = static_cast<size_t>(il);
      return build_mamba2_layer(f, in, ssm[at],
                                {.ssm = h.ssm, .norm_eps = h.norm_eps, .state_layer = layers[at].index}, il);
    };
    x = build_hybrid_blocks(fx, x, shape_, w, attention, layers, block, ssm_block);
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output, nullptr, h.logit_scale != 0.0f ? 1.0f / h.logit_scale : 1.0f);
  }
};

// Attention in every third block (2, 5, 8, ...), Mamba-2 in the others (Granite 4.0-H has one
// attention block in ten); every multiplier away from 1; experts with a shared expert beside them
// and NoPE attention (Granite 4.0-H-Tiny's), or in the "bamba" variant dense FFNs and RoPE
// (Bamba-9B's, which llama.cpp also runs as granitehybrid).
Status write_keys(const SynthDims& dims, Metadata& out) {
  return write_synth_keys<GraniteHybridHParams>(GraniteHybridModel::kArchitecture, dims, out,
                                                [&dims](GraniteHybridHParams& h) {
                                                  h.kv_heads_per_layer = true;
                                                  h.norm_eps = 1e-5f;
                                                  h.n_head_kv_layers.assign(h.n_layer, 0);
                                                  for (uint32_t il = 2; il < h.n_layer; il += 3)
                                                    h.n_head_kv_layers[il] = h.n_head_kv;
                                                  h.embedding_scale = 4.0f;
                                                  h.residual_scale = 0.5f;
                                                  h.attention_scale = 0.3f;
                                                  h.logit_scale = 1.5f;
                                                  h.rope_enabled = dims.variant == "bamba";
                                                  if (h.moe.n_expert > 0) h.n_ff_shared = 2 * h.n_ff;
                                                });
}

const ArchitectureRegistration kGraniteHybrid{Architecture{
    GraniteHybridModel::kArchitecture,
    GraniteHybridModel::create<GraniteHybridModel>,
    write_keys,
    {
        {"tiny", {64, 4, 4, 2, 64, 512, 512, 8, 2}},
        {"small", {256, 4, 8, 2, 128, 1024, 1024, 8, 2}},
        {"tiny-bamba", {64, 4, 4, 2, 192, 512, 512, 0, 0, 0, -1, "bamba"}},
        {"small-bamba", {256, 4, 8, 2, 512, 1024, 1024, 0, 0, 0, -1, "bamba"}},
        // Granite 4.0-H-Tiny: 40 blocks of 1536 (4 with attention), 64 experts (6 used) of 512.
        {"h-tiny", {1536, 40, 12, 4, 512, 100352, 131072, 64, 6}},
    },
}};

}  // namespace
}  // namespace sinter
