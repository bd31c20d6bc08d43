// Nemotron-H ("nemotron_h": Nemotron-H 8B/47B/56B, Nemotron Nano 2) and Nemotron-H MoE
// ("nemotron_h_moe": Nemotron 3 Nano and Super): every block is one pre-normed residual branch of
// one of three kinds,
//
//   out = x + op(attn_norm(x))      op: Mamba-2, attention, or a feed-forward layer
//
// decided as llama.cpp decides it from two per-layer arrays: a block with neither key/value heads
// (attention.head_count_kv) nor a feed-forward length (feed_forward_length) is Mamba-2
// (model/mamba_layer.h); with heads and no length, attention (no RoPE at all, the scores by
// 1/√head_dim); with a length, a feed-forward layer: up, relu(·)², down (no gate, optional
// biases), or, where the file has experts, a mixture of experts with ReLU² experts:
//
//   latent = ffn_latent_down · h        (Nemotron 3 Super; else latent = h)
//   routed = ffn_latent_up · moe(latent) with the router reading h: sigmoid scores, the choice
//            biased by exp_probs_b, the chosen weights renormalized (expert_weights_norm) and
//            scaled (expert_weights_scale), groups of experts where expert_group_count > 1
//   op(h) = routed + down_shexp · relu(up_shexp · h)²
//
// The memory is a hybrid: the KV cache has the attention blocks (numbered among themselves), the
// recurrent state the Mamba-2 blocks' convolution and scan states (numbered likewise); the
// feed-forward blocks keep nothing. Nemotron 3's multi-token-prediction head, nextn_predict_layers
// trailing blocks (each an attention and an MoE sub-layer with its own input fusion), is bound
// but not run: as in llama.cpp's main graph, the model is the blocks before it.
#include <algorithm>

#include "model/decoder.h"
#include "model/mamba_layer.h"

namespace sinter {
namespace {

constexpr MambaVersion kVersion = MambaVersion::k2;

struct NemotronHHParams : DecoderHParams {
  SsmHParams ssm;
  MoeHParams moe;              // n_expert 0: dense feed-forward layers
  uint32_t n_ff_exp = 0;       // expert_feed_forward_length; 0: a layer's length / experts used
  uint32_t n_ff_shared = 0;    // expert_shared_feed_forward_length
  bool weights_norm = false;   // expert_weights_norm
  uint32_t latent = 0;         // moe_latent_size; 0: the experts work at n_embd
  uint32_t n_groups = 0;       // expert_group_count
  uint32_t n_groups_used = 0;  // expert_group_used_count
  uint32_t n_nextn = 0;        // nextn_predict_layers: trailing blocks (after n_layer) not run

  bool is_moe(const HParams& p) const { return p.architecture() == "nemotron_h_moe"; }

  void declare(HParams& p, uint32_t vocab) {
    kv_heads_per_layer = true;
    ff_per_layer = true;
    DecoderHParams::declare(p, vocab);
    ssm.declare(p, kVersion);
    moe.declare(p, /*required=*/is_moe(p));
    if (moe.n_expert > 0) {
      p.optional("{arch}.expert_feed_forward_length", n_ff_exp, 0u);
      p.required("{arch}.expert_shared_feed_forward_length", n_ff_shared);
      p.optional("{arch}.expert_weights_norm", weights_norm, false);
      p.optional("{arch}.moe_latent_size", latent, 0u);
      p.optional("{arch}.expert_group_count", n_groups, 0u);
      p.optional("{arch}.expert_group_used_count", n_groups_used, n_groups);
    }
    // block_count and the per-layer arrays count the nextn blocks; n_layer does not, once read.
    if (p.mode() == HParams::Mode::kRead || n_nextn > 0)
      p.optional("{arch}.nextn_predict_layers", n_nextn, 0u);
    // llama.cpp requires it (the epsilon of the nextn head's final norm; the blocks' norms are
    // RMS norms with layer_norm_rms_epsilon): written to synthetic files, unused here.
    float head_norm_eps = norm_eps;
    p.optional("{arch}.attention.layer_norm_epsilon", head_norm_eps, norm_eps);
    if (!p.status()) return;
    if (head_dim != head_dim_v) p.fail("attention key and value lengths must be equal");
    if (n_nextn != 0 && (moe.n_expert == 0 || n_nextn >= n_layer)) {
      p.fail(
          concat("nextn_predict_layers ", n_nextn, " needs experts and fewer than the ", n_layer, " blocks"));
      return;
    }
    if (p.mode() == HParams::Mode::kRead && n_nextn != 0) {
      n_layer -= n_nextn;
      n_head_kv_layers.resize(n_layer);
      n_ff_layers.resize(n_layer);
    }
    if (moe.n_expert > 0 && n_ff_shared == 0) p.fail("expert_shared_feed_forward_length must be positive");
    if (n_groups > 1 &&
        (moe.n_expert % n_groups != 0 || moe.n_expert / n_groups < 2 || n_groups_used == 0 ||
         n_groups_used > n_groups || moe.n_expert_used > n_groups_used * (moe.n_expert / n_groups)))
      p.fail(concat("expert_group_count ", n_groups, " and expert_group_used_count ", n_groups_used,
                    " do not fit ", moe.n_expert, " experts of which ", moe.n_expert_used, " are used"));
  }

  // The length of layer il's experts: expert_feed_forward_length, or as llama.cpp falls back for
  // files without it, the layer's feed-forward length over the experts used.
  int64_t expert_length(uint32_t il) const {
    return n_ff_exp != 0 ? int64_t{n_ff_exp} : int64_t{n_ff_layers[il]} / std::max(1u, moe.n_expert_used);
  }

  // SynthDims' heads are the attention blocks'; the Mamba-2 blocks have heads of 64 in two
  // groups (Nemotron-H's are in 8), a state of n_embd / 4, an inner size of 2·n_embd.
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    const auto inner = static_cast<uint32_t>(2 * d.n_embd);
    const uint32_t heads = std::max(2u, inner / 64);
    if (inner % heads != 0 || heads % 2 != 0) {
      return make_error(ErrorCode::kInvalidArgument, "nemotron_h: the inner size ", inner,
                        " must divide into an even number of heads of 64");
    }
    ssm.set_synth_dims(kVersion, static_cast<uint32_t>(d.n_embd), heads, 2);
    if (d.n_expert > 0) {
      moe.set_synth_dims(d);
      n_ff_exp = static_cast<uint32_t>(d.n_ff_exp > 0 ? d.n_ff_exp : d.n_ff);
      n_ff_shared = static_cast<uint32_t>(d.n_ff);
    }
    return ok_status();
  }

  MoeOptions moe_options() const {
    MoeOptions o = moe.options(weights_norm);
    o.gating = MoeGating::kSigmoid;
    o.activation = FfnActivation::kReluSquared;
    if (n_groups > 1) {
      o.groups = static_cast<int32_t>(n_groups);
      o.groups_used = static_cast<int32_t>(n_groups_used);
    }
    return o;
  }
};

enum class BlockKind { kMamba, kAttention, kFfn };

// A block's kind and, for Mamba-2 and attention, which recurrent or KV layer holds its memory.
struct NemotronLayer {
  BlockKind kind = BlockKind::kMamba;
  int index = 0;
};

struct NemotronFfn {
  FfnWeights dense;               // up and down (dense layers), or the shared expert (MoE layers)
  MoeWeights moe;                 // experts without gates; absent in dense layers
  Tensor* latent_down = nullptr;  // ffn_latent_down [n_embd, latent]
  Tensor* latent_up = nullptr;    // ffn_latent_up [latent, n_embd]
};

template <bool kMoe>
class NemotronHModel final : public DecoderModel<NemotronHHParams> {
 public:
  static constexpr const char* kArchitecture = kMoe ? "nemotron_h_moe" : "nemotron_h";
  std::vector<NemotronLayer> layers;  // per block
  std::vector<Mamba2Weights> ssm;     // per block (used by Mamba-2 blocks)
  std::vector<NemotronFfn> ffn;       // per block (used by feed-forward blocks)

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    bind_embeddings(b, Output::kOwnOrTied);
    ssm.resize(h.n_layer);
    ffn.resize(h.n_layer);
    int attention_layers = 0, ssm_layers = 0;
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      const auto at = static_cast<size_t>(il);
      BlockWeights& l = w.layers[at];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      const uint32_t n_ff = h.n_ff_layers[at];
      if (n_ff == 0 && !h.has_attention(static_cast<uint32_t>(il))) {
        layers.push_back({BlockKind::kMamba, ssm_layers++});
        ssm[at] = bind_mamba2(b, il, n_embd, h.ssm);
      } else if (n_ff == 0) {
        layers.push_back({BlockKind::kAttention, attention_layers++});
        l.attn =
            bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .output_bias = Presence::kOptional});
      } else {
        layers.push_back({BlockKind::kFfn, 0});
        bind_ffn_layer(b, il, n_ff);
      }
    }
    for (uint32_t il = h.n_layer; il < h.n_layer + h.n_nextn; ++il) bind_nextn_block(b, static_cast<int>(il));
  }

  // A multi-token-prediction block, by llama.cpp's names and shapes: required where the file
  // declares one (and written to synthetic files), never read by the forward pass.
  void bind_nextn_block(WeightBinder& b, int il) {
    const int64_t n_embd = h.n_embd, n_expert = h.moe.n_expert;
    const int64_t n_ff_exp = h.n_ff_exp != 0 ? int64_t{h.n_ff_exp} : int64_t{h.n_ff} / h.moe.n_expert_used;
    const int64_t width = h.latent > 0 ? int64_t{h.latent} : n_embd, shared = h.n_ff_shared;
    const auto name = [il](const char* pattern) { return format_name(pattern, il); };
    for (const char* norm :
         {"blk.%d.nextn.enorm.weight", "blk.%d.nextn.hnorm.weight", "blk.%d.nextn.shared_head_norm.weight",
          "blk.%d.attn_norm.weight", "blk.%d.post_attention_norm.weight"})
      b.require(name(norm), {n_embd});
    b.require(name("blk.%d.nextn.eh_proj.weight"), {2 * n_embd, n_embd});
    bind_attention(b, il, h, {.output_bias = Presence::kOptional});
    b.require(name("blk.%d.ffn_gate_inp.weight"), {n_embd, n_expert});
    b.require(name("blk.%d.exp_probs_b.bias"), {n_expert});
    b.require(name("blk.%d.ffn_up_exps.weight"), {width, n_ff_exp, n_expert});
    b.require(name("blk.%d.ffn_down_exps.weight"), {n_ff_exp, width, n_expert});
    b.require(name("blk.%d.ffn_up_shexp.weight"), {n_embd, shared});
    b.require(name("blk.%d.ffn_down_shexp.weight"), {shared, n_embd});
  }

  void bind_ffn_layer(WeightBinder& b, int il, uint32_t n_ff) {
    const int64_t n_embd = h.n_embd;
    const auto name = [il](const char* pattern) { return format_name(pattern, il); };
    NemotronFfn& f = ffn[static_cast<size_t>(il)];
    if (h.moe.n_expert == 0) {
      f.dense = bind_ffn(b, il, n_embd, n_ff, {.gated = false, .bias = Presence::kOptional});
      return;
    }
    const int64_t n_expert = h.moe.n_expert, n_ff_exp = h.expert_length(static_cast<uint32_t>(il));
    const int64_t width = h.latent > 0 ? int64_t{h.latent} : n_embd;
    f.moe.router = b.require(name("blk.%d.ffn_gate_inp.weight"), {n_embd, n_expert});
    f.moe.selection_bias = b.require(name("blk.%d.exp_probs_b.bias"), {n_expert});
    f.moe.up = b.require(name("blk.%d.ffn_up_exps.weight"), {width, n_ff_exp, n_expert});
    f.moe.down = b.require(name("blk.%d.ffn_down_exps.weight"), {n_ff_exp, width, n_expert});
    if (h.latent > 0) {
      f.latent_down = b.require(name("blk.%d.ffn_latent_down.weight"), {n_embd, width});
      f.latent_up = b.require(name("blk.%d.ffn_latent_up.weight"), {width, n_embd});
    }
    const int64_t shared = h.n_ff_shared;
    f.dense.up = b.require(name("blk.%d.ffn_up_shexp.weight"), {n_embd, shared});
    f.dense.down = b.require(name("blk.%d.ffn_down_shexp.weight"), {shared, n_embd});
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_layers.clear();
    s.kv_windows.clear();
    for (const NemotronLayer& layer : layers) {
      if (layer.kind == BlockKind::kAttention) {
        s.kv_layers.push_back(h.kv_layer());
        s.kv_windows.push_back(0);
        KvRope nope = h.kv_rope(/*neox=*/false);
        nope.rotated = false;
        s.kv_rope.push_back(nope);
      } else if (layer.kind == BlockKind::kMamba) {
        s.recurrent_layers.push_back(h.ssm.layer_state(kVersion));
      }
    }
    return s;
  }

  Tensor* build_ffn_layer(ForwardContext& fx, Tensor* x, int il) const {
    const NemotronFfn& f = ffn[static_cast<size_t>(il)];
    if (!f.moe.present()) return fx.build_ffn(x, f.dense, FfnActivation::kReluSquared, il);
    Graph& g = fx.graph;
    Tensor* latent = x;
    if (f.latent_down != nullptr)
      latent = ForwardContext::name(g.mul_mat(f.latent_down, x), "ffn_latent_down", il);
    Tensor* routed = build_moe_ffn(fx, latent, f.moe, h.moe_options(), il, /*router_x=*/x);
    if (f.latent_up != nullptr)
      routed = ForwardContext::name(g.mul_mat(f.latent_up, routed), "ffn_latent_up", il);
    Tensor* shared =
        ForwardContext::name(fx.build_ffn(x, f.dense, FfnActivation::kReluSquared, il), "ffn_shexp", il);
    return ForwardContext::name(g.add(routed, shared), "ffn_out", il);
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Graph& g = fx.graph;
    Tensor* x = fx.build_inp_embd(w.token_embd);
    AttentionOptions attention = h.attention(/*neox=*/false);
    attention.use_rope = false;
    const int n_layer = static_cast<int>(w.layers.size());
    for (int il = 0; il < n_layer; ++il) {
      const auto at = static_cast<size_t>(il);
      const NemotronLayer& layer = layers[at];
      Tensor* cur = fx.build_norm(x, w.layers[at].attn_norm, NormKind::kRms, h.norm_eps, "attn_norm", il);
      switch (layer.kind) {
        case BlockKind::kMamba:
          cur = build_mamba2_layer(fx, cur, ssm[at],
                                   {.ssm = h.ssm, .norm_eps = h.norm_eps, .state_layer = layer.index}, il);
          break;
        case BlockKind::kAttention:
          fx.use_layer(attention, shape_, layer.index);
          cur = fx.build_attn(cur, w.layers[at].attn, attention, il);
          break;
        case BlockKind::kFfn: cur = build_ffn_layer(fx, cur, il); break;
      }
      fx.filter_last_layer(il, n_layer, {&cur, &x});
      x = ForwardContext::name(g.add(cur, x), "l_out", il);
    }
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }
};

// Blocks in Nemotron-H's order, repeating M - M * - (Mamba-2, feed-forward, Mamba-2, attention,
// feed-forward): in six blocks three Mamba-2, two feed-forward and one attention, the last
// block Mamba-2. The MoE variant: Nemotron 3 Nano's renormalized weights scaled by 2.5; with
// the "latent" variant Nemotron 3 Super's latent experts (at n_embd / 2).
template <bool kMoe>
Status write_keys(const SynthDims& dims, Metadata& out) {
  return write_synth_keys<NemotronHHParams>(
      NemotronHModel<kMoe>::kArchitecture, dims, out, [&dims](NemotronHHParams& h) {
        h.kv_heads_per_layer = true;
        h.ff_per_layer = true;
        h.norm_eps = 1e-5f;
        if (!kMoe) h.moe = {};
        h.n_head_kv_layers.assign(h.n_layer, 0);
        h.n_ff_layers.assign(h.n_layer, 0);
        for (uint32_t il = 0; il < h.n_layer; ++il) {
          const uint32_t kind = il % 5;
          if (kind == 3) h.n_head_kv_layers[il] = h.n_head_kv;
          if (kind == 1 || kind == 4) h.n_ff_layers[il] = h.moe.n_expert > 0 ? h.n_ff_exp : h.n_ff;
        }
        if (!kMoe) return;
        h.weights_norm = true;
        h.moe.weights_scale = 2.5f;
        if (dims.variant == "latent" || dims.variant == "latent-mtp") h.latent = h.n_embd / 2;
        if (dims.variant == "latent-mtp") {
          // Nemotron 3 Super's multi-token-prediction block after the others (not run).
          h.n_nextn = 1;
          h.n_layer += 1;
          h.n_head_kv_layers.push_back(h.n_head_kv);
          h.n_ff_layers.push_back(h.n_ff_exp);
        }
      });
}

const ArchitectureRegistration kNemotronH{Architecture{
    NemotronHModel<false>::kArchitecture,
    NemotronHModel<false>::create<NemotronHModel<false>>,
    write_keys<false>,
    {
        {"tiny", {64, 6, 4, 2, 192, 512, 512}},
        {"small", {256, 6, 8, 2, 768, 1024, 1024}},
        // Nemotron-H-8B: 52 blocks of 4096, 32 heads (8 KV) of 128, FFNs of 21504.
        {"8b", {4096, 52, 32, 8, 21504, 131072, 8192}},
    },
}};

const ArchitectureRegistration kNemotronHMoe{Architecture{
    NemotronHModel<true>::kArchitecture,
    NemotronHModel<true>::create<NemotronHModel<true>>,
    write_keys<true>,
    {
        {"tiny", {64, 6, 4, 2, 128, 512, 512, 8, 2, 64}},
        {"small", {256, 6, 8, 2, 256, 1024, 1024, 8, 2, 128}},
        {"tiny-latent", {64, 6, 4, 2, 128, 512, 512, 8, 2, 64, -1, "latent"}},
        {"small-latent", {256, 6, 8, 2, 256, 1024, 1024, 8, 2, 128, -1, "latent"}},
        {"tiny-latent-mtp", {64, 6, 4, 2, 128, 512, 512, 8, 2, 64, -1, "latent-mtp"}},
        // Nemotron 3 Nano 30B-A3B: 52 blocks of 2688, 128 experts (6 used) of 1856, a shared
        // expert of 3712.
        {"nano", {2688, 52, 32, 2, 3712, 131072, 262144, 128, 6, 1856}},
    },
}};

}  // namespace
}  // namespace sinter
