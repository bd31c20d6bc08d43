// Jamba (ai21labs/Jamba-v0.1, Jamba 1.5/1.6/1.7, Jamba-Reasoning): a hybrid whose blocks hold
// either a Mamba-1 layer or attention, each followed by a dense SwiGLU FFN or a mixture of
// experts:
//
//   h = x + op(attn_norm(x))      op: Mamba-1 (dt, B and C RMS-normed with weights) or attention
//   out = h + ffn(ffn_norm(h))    ffn: dense, or softmax-routed experts
//
// As llama.cpp reads it, attention.head_count_kv has one value per layer and 0 marks a Mamba
// layer (Jamba's files have attention in every eighth block from the fifth). Attention has no
// positional encoding at all (no RoPE: the Mamba layers carry the order), heads of
// n_embd / n_head. A block's FFN is a mixture of experts when the file has its
// ffn_gate_inp (Jamba's files: every second block from the second), as llama.cpp decides it;
// experts are routed by a softmax over all of them, the chosen weights neither renormalized nor
// scaled (llama.cpp's Jamba ignores expert_weights_scale), and have feed_forward_length's width.
//
// The memory is a hybrid: the KV cache has the attention layers (numbered among themselves) and
// the recurrent state the Mamba layers (numbered likewise).
#include "model/decoder.h"
#include "model/mamba_layer.h"

namespace sinter {
namespace {

constexpr MambaVersion kVersion = MambaVersion::k1;

struct JambaHParams : DecoderHParams {
  SsmHParams ssm;
  MoeHParams moe;

  void declare(HParams& p, uint32_t vocab) {
    kv_heads_per_layer = true;
    DecoderHParams::declare(p, vocab);
    ssm.declare(p, kVersion);
    moe.declare(p, /*required=*/false);
  }

  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    ssm.set_synth_dims(kVersion, n_embd, 0, 0);
    return ok_status();
  }

  MoeOptions moe_options() const {
    MoeOptions o = moe.options(/*normalize=*/false);
    o.gating = MoeGating::kSoftmax;
    o.scale = 1.0f;
    return o;
  }
};

class JambaModel final : public DecoderModel<JambaHParams> {
 public:
  static constexpr const char* kArchitecture = "jamba";

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    bind_embeddings(b, Output::kOwnOrTied);
    ssm.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      const bool attention = h.has_attention(static_cast<uint32_t>(il));
      add_hybrid_layer(layers, attention);
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      if (attention) {
        l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional});
      } else {
        ssm[static_cast<size_t>(il)] = bind_mamba1(b, il, n_embd, h.ssm, /*weighted_dt_b_c_norms=*/true);
      }
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, n_embd, Presence::kRequired);
      if (has_experts(b, il)) {
        l.moe = bind_moe(b, il, n_embd, h.n_ff, h.moe.n_expert);
      } else {
        l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {});
      }
    }
  }

  std::vector<HybridLayer> layers;  // per block
  std::vector<Mamba1Weights> ssm;   // per block (empty for attention blocks)

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_layers.clear();
    s.kv_windows.clear();
    KvRope none = h.kv_rope(/*neox=*/false);
    none.rotated = false;
    for (const HybridLayer& layer : layers) {
      if (layer.attention) {
        s.kv_layers.push_back(h.kv_layer());
        s.kv_windows.push_back(0);
        s.kv_rope.push_back(none);
      } else {
        s.recurrent_layers.push_back(h.ssm.layer_state(kVersion));
      }
    }
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* x = fx.build_inp_embd(w.token_embd);
    AttentionOptions attention = h.attention(/*neox=*/false);
    const BlockOptions block{.norm_eps = h.norm_eps, .moe = h.moe_options()};
    BlockOptions ssm_block = block;
    ssm_block.attention = [this](ForwardContext& f, Tensor* in, const AttentionOptions&, int il) {
      const auto at = static_cast<size_t>(il);
      return build_mamba1_layer(f, in, ssm[at],
                                {.ssm = h.ssm, .norm_eps = h.norm_eps, .state_layer = layers[at].index}, il);
    };
    x = build_hybrid_blocks(fx, x, shape_, w, attention, layers, block, ssm_block);
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }

 private:
  // A file's block has experts where it has a router (as llama.cpp decides); a synthetic model's
  // every second block from the second (Jamba's expert_layer_period 2, offset 1).
  bool has_experts(const WeightBinder& b, int il) const {
    if (h.moe.n_expert == 0) return false;
    if (b.mode() == WeightBinder::Mode::kSchema) return il % 2 == 1;
    return b.file_tensor(format_name("blk.%d.ffn_gate_inp.weight", il)) != nullptr;
  }
};

const ArchitectureRegistration kJamba{Architecture{
    JambaModel::kArchitecture,
    JambaModel::create<JambaModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<JambaHParams>(JambaModel::kArchitecture, dims, out, [](JambaHParams& h) {
        h.kv_heads_per_layer = true;
        h.norm_eps = 1e-6f;
        // Attention in every fourth block from the third (Jamba's files: every eighth from the
        // fifth), so that Mamba layers come before and after it; the rest Mamba-1.
        h.n_head_kv_layers.assign(h.n_layer, 0);
        for (uint32_t il = 2; il < h.n_layer; il += 4) h.n_head_kv_layers[il] = h.n_head_kv;
      });
    },
    // Four blocks: Mamba (dense FFN), Mamba (experts), attention (dense), Mamba (experts). The
    // Mamba layers' inner size is 2·n_embd (the only expansion llama.cpp runs), their state 16.
    {
        {"tiny", {64, 4, 4, 2, 128, 512, 512, 8, 2}},
        {"small", {256, 4, 8, 2, 512, 1024, 1024, 8, 2}},
        // Jamba Mini 1.5-1.7: 32 blocks of 4096, 16 experts (2 used) of 14336.
        {"mini", {4096, 32, 32, 8, 14336, 65536, 262144, 16, 2}},
    },
}};

}  // namespace
}  // namespace sinter
