// Falcon-H1 (tiiuae/Falcon-H1-*): a parallel hybrid. Every block runs grouped-query attention
// (NeoX RoPE) and a Mamba-2 layer side by side on the same normed input and adds both to the
// residual stream, then a SwiGLU FFN:
//
//   n = attn_norm(x);   h = (attn(n) + mamba2(n)) + x;   out = h + ffn(ffn_norm(h))
//
// Falcon-H1's multipliers (embedding, attention in/out and key, SSM in/out and the five
// per-part multipliers of ssm_in's z, x, B, C and dt rows, the FFN's gate and down, the LM head)
// are folded into the weights by llama.cpp's converter: its graph, and this one, apply none.
// The Mamba-2 layer's inner size (ssm.inner_size, Falcon-H1's mamba_d_ssm) is its own, not
// 2·n_embd, and its gated norm (ssm_norm) is present only in some files (mamba_rms_norm).
// Attention heads may be wider than n_embd / n_head (attention.key_length).
//
// Every block has both kinds of memory: KV layer il in the KV cache and recurrent layer il in
// the recurrent state (the two lists are numbered apart, here both by the block's number).
#include "model/decoder.h"
#include "model/mamba_layer.h"

namespace sinter {
namespace {

constexpr MambaVersion kVersion = MambaVersion::k2;

struct FalconH1HParams : DecoderHParams {
  SsmHParams ssm;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    ssm.declare(p, kVersion);
  }

  // Attention: SynthDims' heads, each twice n_embd / n_head wide (as Falcon-H1's heads of 64 are
  // wider than its n_embd / n_head). Mamba-2: an inner size of 1.5·n_embd (Falcon-H1-0.5B's
  // 1536 for 1024) in n_head heads and n_head_kv groups, a state of n_embd / 4.
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    head_dim = head_dim_v = 2 * (n_embd / n_head);
    rope.n_rot = head_dim;
    rope.freq_base = 100000.0f;
    ssm.set_synth_dims(kVersion, n_embd, n_head, n_head_kv);
    ssm.d_inner = 3 * n_embd / 2;
    if (n_embd % 2 != 0 || ssm.d_inner % n_head != 0 || n_head % n_head_kv != 0) {
      return make_error(
          ErrorCode::kInvalidArgument, "falcon-h1: the SSM inner size 1.5·n_embd = ", ssm.d_inner,
          " must divide into n_head ", n_head, " heads, and the heads into n_head_kv ", n_head_kv, " groups");
    }
    return ok_status();
  }
};

class FalconH1Model final : public DecoderModel<FalconH1HParams> {
 public:
  static constexpr const char* kArchitecture = "falcon-h1";
  std::vector<Mamba2Weights> ssm;  // per block

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    bind_embeddings(b, Output::kOwnOrTied);
    ssm.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      l.attn =
          bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .output_bias = Presence::kOptional});
      // The gated norm where the file has one, and always in synthetic models.
      const bool norm = b.mode() == WeightBinder::Mode::kSchema ||
                        b.file_tensor(format_name("blk.%d.ssm_norm.weight", il)) != nullptr;
      ssm[static_cast<size_t>(il)] = bind_mamba2(b, il, n_embd, h.ssm, norm);
      // Named without ".weight" (the converter maps Falcon-H1's pre_ff_layernorm.weight to
      // FFN_PRE_NORM, whose name is blk.N.ffn_norm), as llama.cpp reads it.
      l.ffn_norm = {b.require(format_name("blk.%d.ffn_norm", il), {n_embd}), nullptr};
      l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {.bias = Presence::kOptional});
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    s.recurrent_layers.assign(h.n_layer, h.ssm.layer_state(kVersion));
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* x = fx.build_inp_embd(w.token_embd);
    AttentionOptions attention = h.attention(/*neox=*/true);
    BlockOptions block{.norm_eps = h.norm_eps};
    // The block's "attention" is both mixers on the same normed input; the block keeps the
    // residual and the FFN. The Mamba layer sees every token (rows are filtered after it).
    block.attention = [this](ForwardContext& f, Tensor* in, const AttentionOptions& layer, int il) {
      const auto at = static_cast<size_t>(il);
      Tensor* attended = ForwardContext::name(f.build_attn(in, w.layers[at].attn, layer, il), "attn_out", il);
      Tensor* mixed =
          build_mamba2_layer(f, in, ssm[at], {.ssm = h.ssm, .norm_eps = h.norm_eps, .state_layer = il}, il);
      return ForwardContext::name(f.graph.add(attended, mixed), "layer_out", il);
    };
    const int n_layer = static_cast<int>(h.n_layer);
    for (int il = 0; il < n_layer; ++il) {
      fx.use_layer(attention, shape_, il);
      x = build_block(fx, x, w.layers[static_cast<size_t>(il)], attention, block, il, n_layer);
    }
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }
};

const ArchitectureRegistration kFalconH1{Architecture{
    FalconH1Model::kArchitecture,
    FalconH1Model::create<FalconH1Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<FalconH1HParams>(FalconH1Model::kArchitecture, dims, out,
                                               [](FalconH1HParams& h) { h.norm_eps = 1e-5f; });
    },
    // n_head attention heads (and as many SSM heads), n_head_kv KV heads (and as many groups of
    // SSM heads sharing B and C).
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 3, 8, 2, 768, 1024, 1024}},
    },
}};

}  // namespace
}  // namespace sinter
