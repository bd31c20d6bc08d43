// Qwen 3.5 / 3.6 ("qwen35"), their mixtures of experts ("qwen35moe") and Qwen3-Next /
// Qwen3-Coder-Next ("qwen3next"): hybrids whose blocks put a gated delta net
// (model/delta_net_layer.h) or gated attention (model/gated_attention.h: a query projection twice
// as wide whose second half gates the output through a sigmoid, per-head Q/K RMS norms, partial
// NeoX-paired RoPE) where a decoder has attention, each followed by a SwiGLU FFN, or in the MoE
// files a mixture of experts (softmax over all experts, the top k renormalized, never scaled)
// plus a shared expert gated by sigmoid(ffn_gate_inp_shexp · x):
//
//   h = x + op(attn_norm(x))                  op: the delta net or gated attention
//   out = h + ffn(post_attention_norm(h))
//
// As llama.cpp reads them, block il has attention when (il + 1) % full_attention_interval == 0
// (default 4: three delta nets, then attention). Qwen 3.5's RoPE is llama.cpp's interleaved
// M-RoPE (rope.dimension_sections) over positions (p, p, p, 0), as every text token has them;
// there it rotates each pair that a section covers by p·θ_i, as NeoX RoPE does, and leaves the
// others alone. Qwen 3.5's sections ([11, 11, 10] of 32 pairs) cover every pair, so sinter runs it
// as NeoX RoPE and refuses sections that do not; Qwen3-Next's is plain NeoX RoPE.
//
// Qwen3-Next differs in two more places: its value heads share key heads in groups (head h reads
// key head h / (H / H_k); Qwen 3.5's converter reorders the value heads so that h reads h % H_k),
// and the beta and alpha projections are one matrix (ssm_ba). Its blocks always have experts.
//
// The memory is a hybrid: the KV cache has the attention layers (numbered among themselves), the
// recurrent state each delta net's convolution and S (numbered likewise).
//
// The multi-token-prediction blocks that llama.cpp's converter keeps by default
// (nextn_predict_layers, counted in block_count, after the others: a gated-attention block with
// the file's kind of FFN, and the nextn projections and norms) are bound and kept for speculative
// decoding, never run by the forward pass, as llama.cpp's main graph does.
//
// Not read: attention.recurrent_layers (no converter writes it; a file that has it is refused),
// experts whose gate and up are fused (ffn_gate_up_exps, written only on request), and
// Qwen3-Next's legacy fused ssm_in (files of converters before the split into attn_qkv and
// attn_gate).
#include <algorithm>

#include "model/decoder.h"
#include "model/delta_net_layer.h"
#include "model/gated_attention.h"

namespace sinter {
namespace {

// Whether interleaved M-RoPE with text positions (p, p, p, 0) rotates each of n_rot / 2 pairs by
// its position (llama.cpp's ggml_mrope_cache_init with is_imrope: pair i is in sector
// i % Σsections, and a sector that no section covers takes the fourth stream's position, 0).
bool imrope_rotates_every_pair(const std::vector<uint32_t>& sections, uint32_t n_rot) {
  uint64_t total = 0;
  for (uint32_t s : sections) total += s;
  if (total == 0) return false;
  for (uint64_t pair = 0; pair < n_rot / 2; ++pair) {
    const uint64_t sector = pair % total;
    const bool covered = (sector % 3 == 0 && sector < 3 * uint64_t{sections[0]}) ||
                         (sector % 3 == 1 && sector < 3 * uint64_t{sections[1]}) ||
                         (sector % 3 == 2 && sector < 3 * uint64_t{sections[2]});
    if (!covered) return false;
  }
  return true;
}

struct Qwen35HParams : DecoderHParams {
  SsmHParams ssm;  // the delta nets' sizes (model/delta_net_layer.h)
  uint32_t full_attention_interval = 4;
  std::vector<uint32_t> rope_sections = {0, 0, 0, 0};
  // qwen35moe and qwen3next
  MoeHParams moe;
  uint32_t n_ff_exp = 0;     // expert_feed_forward_length; 0: feed_forward_length / experts used
  uint32_t n_ff_shared = 0;  // expert_shared_feed_forward_length; 0: feed_forward_length
  uint32_t n_nextn = 0;      // nextn_predict_layers: trailing blocks (after n_layer) kept, not run

  static bool is_moe(const HParams& p) { return p.architecture() != "qwen35"; }
  static bool is_next(const HParams& p) { return p.architecture() == "qwen3next"; }

  void declare(HParams& p, uint32_t vocab) {
    ff_optional = is_moe(p);
    DecoderHParams::declare(p, vocab);
    ssm.declare(p, MambaVersion::k2);
    check_delta_net_keys(p, ssm);
    p.optional("{arch}.full_attention_interval", full_attention_interval, 4u);
    if (!is_next(p)) p.array("{arch}.rope.dimension_sections", rope_sections, 4);
    if (is_moe(p)) {
      moe.declare(p, /*required=*/true);
      p.optional("{arch}.expert_feed_forward_length", n_ff_exp, 0u);
      p.optional("{arch}.expert_shared_feed_forward_length", n_ff_shared, 0u);
    }
    // block_count counts the multi-token-prediction blocks; n_layer does not, once read.
    if (p.mode() == HParams::Mode::kRead || n_nextn > 0)
      p.optional("{arch}.nextn_predict_layers", n_nextn, 0u);
    if (p.mode() == HParams::Mode::kRead && p.has("{arch}.attention.recurrent_layers"))
      p.fail("attention.recurrent_layers is not supported (sinter reads full_attention_interval)");
    if (!p.status()) return;
    if (n_nextn >= n_layer) {
      p.fail(concat("nextn_predict_layers ", n_nextn, " leaves none of the ", n_layer, " blocks to run"));
      return;
    }
    if (p.mode() == HParams::Mode::kRead) n_layer -= n_nextn;
    if (full_attention_interval == 0) p.fail("full_attention_interval must be positive");
    if (head_dim != head_dim_v) p.fail("attention key and value lengths must be equal");
    if (!is_next(p) && !imrope_rotates_every_pair(rope_sections, rope.n_rot)) {
      p.fail(concat("rope.dimension_sections [", rope_sections[0], ", ", rope_sections[1], ", ",
                    rope_sections[2], ", ", rope_sections[3], "] leave some of the ", rope.n_rot / 2,
                    " rotary pairs unrotated for text (not supported)"));
    }
    if (is_moe(p) && expert_ff() == 0) p.fail("the experts' feed-forward length is 0");
    if (is_moe(p) && shared_ff() == 0) p.fail("the shared expert's feed-forward length is 0");
  }

  uint32_t expert_ff() const {
    if (n_ff_exp != 0) return n_ff_exp;
    return moe.n_expert_used > 0 ? n_ff / moe.n_expert_used : 0;
  }
  uint32_t shared_ff() const { return n_ff_shared != 0 ? n_ff_shared : n_ff; }
  bool is_attention_block(uint32_t il) const { return (il + 1) % full_attention_interval == 0; }

  // Attention heads as SynthDims give them, RoPE over a quarter of each head (Qwen 3.5's partial
  // rotary factor) in sections of Qwen's proportions; delta nets of heads of n_embd / 4 (at most
  // 128, Qwen 3.5's), twice as many value heads as key heads (Qwen 3.5-9B's ratio), a kernel of 4.
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    rope.n_rot = std::max(2u, head_dim / 4 / 2 * 2);
    const uint32_t pairs = rope.n_rot / 2;
    rope_sections = {0, 0, pairs / 3, 0};
    rope_sections[1] = (pairs - rope_sections[2]) / 2;
    rope_sections[0] = pairs - rope_sections[1] - rope_sections[2];
    const auto n_embd_u = static_cast<uint32_t>(d.n_embd);
    ssm.d_conv = 4;
    ssm.d_state = std::clamp(n_embd_u / 4, 1u, 128u);
    ssm.n_group = std::clamp(n_embd_u / 128, 2u, 16u);
    ssm.dt_rank = 2 * ssm.n_group;
    ssm.d_inner = ssm.dt_rank * ssm.d_state;
    moe.set_synth_dims(d);  // read and written by the MoE architectures alone
    n_ff_exp = static_cast<uint32_t>(d.n_ff_exp > 0 ? d.n_ff_exp : d.n_ff);
    n_ff_shared = n_ff;
    if (d.variant == "mtp") {  // one multi-token-prediction block after the others
      n_nextn = 1;
      n_layer += 1;
    }
    return ok_status();
  }
};

enum class Qwen35Kind { kDense, kMoe, kNext };

// Qwen 3.5, Qwen 3.5 MoE and Qwen3-Next: one model, named by `kKind`.
template <Qwen35Kind kKind>
class Qwen35Model final : public DecoderModel<Qwen35HParams> {
 public:
  static constexpr bool kMoe = kKind != Qwen35Kind::kDense;
  static constexpr bool kNext = kKind == Qwen35Kind::kNext;
  static constexpr const char* kArchitecture = kKind == Qwen35Kind::kDense ? "qwen35"
                                               : kKind == Qwen35Kind::kMoe ? "qwen35moe"
                                                                           : "qwen3next";

  std::vector<HybridLayer> layers;          // per block
  std::vector<DeltaNetWeights> delta_nets;  // per block (empty for attention blocks)
  // The multi-token-prediction blocks (kept for speculative decoding, not run): a block as the
  // others, with gated attention, and the nextn parts.
  struct NextnBlock {
    BlockWeights block;
    Tensor* eh_proj = nullptr;  // [2·n_embd, n_embd]: the token's and the hidden state's norms, joined
    NormWeights enorm, hnorm, shared_head_norm;
    Tensor* embed_tokens = nullptr;      // optional: the trunk's when absent
    Tensor* shared_head_head = nullptr;  // optional: the trunk's output when absent
  };
  std::vector<NextnBlock> nextn;

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    bind_embeddings(b, Output::kOwnOrTied);
    delta_nets.resize(h.n_layer);
    const DeltaNetDims dims = DeltaNetDims::of(h.ssm);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      const bool attention = h.is_attention_block(static_cast<uint32_t>(il));
      add_hybrid_layer(layers, attention);
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      if (attention) {
        l.attn = bind_gated_attention(b, il, n_embd, h.n_head, h.n_head_kv, h.head_dim);
      } else {
        delta_nets[static_cast<size_t>(il)] = bind_delta_net(b, il, n_embd, dims, /*fused_beta_alpha=*/kNext);
      }
      bind_ffn_part(b, il, l);
    }
    for (uint32_t il = h.n_layer; il < h.n_layer + h.n_nextn; ++il) bind_nextn_block(b, static_cast<int>(il));
  }

  // The norm before the FFN (which llama.cpp names after the attention it follows) and the FFN.
  void bind_ffn_part(WeightBinder& b, int il, BlockWeights& l) {
    const int64_t n_embd = h.n_embd;
    l.ffn_norm = bind_norm(b, "blk.%d.post_attention_norm", il, n_embd, Presence::kRequired);
    if constexpr (kMoe) {
      l.moe = bind_moe(b, il, n_embd, h.expert_ff(), h.moe.n_expert);
      l.moe.shared = bind_shared_experts(b, il, n_embd, h.shared_ff());
      l.moe.shared_gate = bind_shared_expert_gate(b, il, n_embd);
    } else {
      l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {});
    }
  }

  void bind_nextn_block(WeightBinder& b, int il) {
    const int64_t n_embd = h.n_embd, n_vocab = h.n_vocab;
    NextnBlock& m = nextn.emplace_back();
    m.block.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
    m.block.attn = bind_gated_attention(b, il, n_embd, h.n_head, h.n_head_kv, h.head_dim);
    bind_ffn_part(b, il, m.block);
    const auto name = [il](const char* pattern) { return format_name(pattern, il); };
    m.eh_proj = b.require(name("blk.%d.nextn.eh_proj.weight"), {2 * n_embd, n_embd});
    m.enorm = bind_norm(b, "blk.%d.nextn.enorm", il, n_embd, Presence::kRequired);
    m.hnorm = bind_norm(b, "blk.%d.nextn.hnorm", il, n_embd, Presence::kRequired);
    m.shared_head_norm = bind_norm(b, "blk.%d.nextn.shared_head_norm", il, n_embd, Presence::kOptional);
    m.embed_tokens = b.optional(name("blk.%d.nextn.embed_tokens.weight"), {n_embd, n_vocab});
    m.shared_head_head = b.optional(name("blk.%d.nextn.shared_head_head.weight"), {n_embd, n_vocab});
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_layers.clear();
    s.kv_windows.clear();
    const DeltaNetDims dims = DeltaNetDims::of(h.ssm);
    for (const HybridLayer& layer : layers) {
      if (layer.attention) {
        s.kv_layers.push_back(h.kv_layer());
        s.kv_windows.push_back(0);
        s.kv_rope.push_back(h.kv_rope(/*neox=*/true));
      } else {
        s.recurrent_layers.push_back(delta_net_state(dims));
      }
    }
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* x = fx.build_inp_embd(w.token_embd);
    AttentionOptions attention = h.attention(/*neox=*/true);
    MoeOptions moe = h.moe.options(/*normalize=*/true);
    moe.scale = 1.0f;  // llama.cpp reads no expert_weights_scale for these models
    BlockOptions attention_block{.norm_eps = h.norm_eps, .moe = moe};
    attention_block.attention = [this](ForwardContext& f, Tensor* in, const AttentionOptions& o, int il) {
      return build_gated_attention(f, in, w.layers[static_cast<size_t>(il)].attn, o, il);
    };
    BlockOptions delta_block = attention_block;
    const DeltaNetDims dims = DeltaNetDims::of(h.ssm);
    delta_block.attention = [this, dims](ForwardContext& f, Tensor* in, const AttentionOptions&, int il) {
      const auto at = static_cast<size_t>(il);
      return build_delta_net_layer(
          f, in, delta_nets[at],
          {.dims = dims, .norm_eps = h.norm_eps, .state_layer = layers[at].index, .grouped_heads = kNext},
          il);
    };
    x = build_hybrid_blocks(fx, x, shape_, w, attention, layers, attention_block, delta_block);
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }
};

Status write_qwen35_keys(const char* architecture, const SynthDims& dims, Metadata& out) {
  return write_synth_keys<Qwen35HParams>(architecture, dims, out, [](Qwen35HParams& h) {
    h.norm_eps = 1e-6f;
    h.full_attention_interval = 4;
  });
}

template <Qwen35Kind kKind>
Architecture qwen35_architecture(std::vector<std::pair<std::string, SynthDims>> presets) {
  using M = Qwen35Model<kKind>;
  return Architecture{
      M::kArchitecture, M::template create<M>,
      [](const SynthDims& dims, Metadata& out) { return write_qwen35_keys(M::kArchitecture, dims, out); },
      std::move(presets)};
}

// Presets: four blocks (three delta nets, then attention), at test sizes; and shapes of the
// released models for speed (Qwen3.5-2B: 24 blocks of 2048, heads of 256; Qwen3.5-4B: 32 blocks
// of 2560; Qwen3.5-9B: 32 blocks of 4096; Qwen3.6-35B-A3B: 40 blocks of 2048, 256 experts of 512, 8 used;
// Qwen3-Next-80B-A3B: 48 blocks of 2048, 512 experts of 512, 10 used; the MoE models with 8 query heads where
// they have 16: synth sizes heads as n_embd / n_head). The delta nets' heads follow set_synth_dims' rule (16
// key heads of 128 at these widths, twice as many value heads).
const ArchitectureRegistration kQwen35{qwen35_architecture<Qwen35Kind::kDense>({
    {"tiny", {64, 4, 4, 2, 192, 512, 512}},
    {"small", {256, 4, 8, 4, 768, 1024, 1024}},
    {"tiny-mtp", {64, 4, 4, 2, 192, 512, 512, 0, 0, 0, -1, "mtp"}},
    {"2b", {2048, 24, 8, 2, 6144, 248320, 262144}},
    {"4b", {2560, 32, 16, 4, 9216, 248320, 262144}},
    {"9b", {4096, 32, 16, 4, 12288, 248320, 262144}},
})};

const ArchitectureRegistration kQwen35Moe{qwen35_architecture<Qwen35Kind::kMoe>({
    {"tiny", {64, 4, 4, 2, 192, 512, 512, 8, 2, 64}},
    {"small", {256, 4, 8, 4, 512, 1024, 1024, 8, 2, 128}},
    {"tiny-mtp", {64, 4, 4, 2, 192, 512, 512, 8, 2, 64, -1, "mtp"}},
    {"35b-a3b", {2048, 40, 8, 2, 512, 248320, 262144, 256, 8, 512}},
})};

const ArchitectureRegistration kQwen3Next{qwen35_architecture<Qwen35Kind::kNext>({
    {"tiny", {64, 4, 4, 2, 192, 512, 512, 8, 2, 64}},
    {"small", {256, 4, 8, 4, 512, 1024, 1024, 8, 2, 128}},
    {"tiny-mtp", {64, 4, 4, 2, 192, 512, 512, 8, 2, 64, -1, "mtp"}},
    {"80b-a3b", {2048, 48, 8, 2, 512, 151936, 262144, 512, 10, 512}},
})};

}  // namespace
}  // namespace sinter
