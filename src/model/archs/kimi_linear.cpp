// Kimi Linear (moonshotai/Kimi-Linear-48B-A3B, "kimi-linear"): a hybrid whose blocks put Kimi
// Delta Attention (KDA, a gated delta net with a decay per key channel) or multi-head latent
// attention without RoPE where a decoder has attention, each followed by a dense SwiGLU FFN (the
// leading blocks) or DeepSeek-V3's mixture of experts (sigmoid routing with a selection bias, the
// chosen weights renormalized and scaled, shared experts):
//
//   h = x + op(attn_norm(x))        op: KDA or latent attention (model/mla.h, rotate off)
//   out = h + ffn(ffn_norm(h))
//
// A KDA layer (llama.cpp's kimi-linear graph, head size kda.head_dim, attention.head_count heads):
//   q, k, v [hd·H, T] = silu(conv_{q,k,v}(attn_{q,k,v} · x))   three short convolutions, kernel
//   ssm.conv_kernel q, k = L2-normalized per head (eps: the RMS epsilon) g [hd, H, T] = softplus(ssm_f_b ·
//   ssm_f_a · x + ssm_dt.bias) · ssm_a   (ssm_a [1, H] = −exp(A_log)) beta [H, T] = sigmoid(ssm_beta · x) y =
//   gated_delta_net(q, k, v, g, beta; scale 1/√hd)            the per-key gate (graph.h) out = attn_output ·
//   (rms_norm(y) per head · ssm_norm · sigmoid(ssm_g_b · ssm_g_a · x))
//
// As llama.cpp reads it, attention.head_count_kv has one value per block, 0 for a KDA block and
// 1 for latent attention (the converter writes the latent attention as one KV head of
// kv_lora_rank + rope dimensions). The memory is a hybrid: the KV cache has the attention blocks,
// the recurrent state each KDA block's three convolution states and its delta-rule state.
#include <cmath>

#include "model/decoder.h"
#include "model/mla.h"

namespace sinter {
namespace {

struct KimiLinearHParams : DecoderHParams {
  MoeHParams moe;
  uint32_t n_dense_lead = 0;
  uint32_t kv_lora = 0;
  uint32_t head_k_mla = 0;  // nope + rope per head
  uint32_t head_v_mla = 0;
  uint32_t n_ff_exp = 0;
  uint32_t n_shared = 0;
  uint32_t gating = 2;  // expert_gating_func: 1 softmax, 2 sigmoid
  uint32_t d_conv = 0;  // ssm.conv_kernel
  uint32_t kda_head = 0;

  void declare(HParams& p, uint32_t vocab) {
    kv_heads_per_layer = true;
    DecoderHParams::declare(p, vocab);
    moe.declare(p, /*required=*/true);
    p.optional("{arch}.leading_dense_block_count", n_dense_lead, 0u);
    p.required("{arch}.attention.kv_lora_rank", kv_lora);
    p.required("{arch}.attention.key_length_mla", head_k_mla);
    p.required("{arch}.attention.value_length_mla", head_v_mla);
    p.required("{arch}.expert_feed_forward_length", n_ff_exp);
    p.required("{arch}.expert_shared_count", n_shared);
    p.required("{arch}.expert_gating_func", gating);
    p.required("{arch}.ssm.conv_kernel", d_conv);
    p.required("{arch}.kda.head_dim", kda_head);
    if (p.mode() == HParams::Mode::kRead && p.has("{arch}.attention.q_lora_rank"))
      p.fail("compressed queries (attention.q_lora_rank) are not supported for kimi-linear");
    if (!p.status()) return;
    if (gating != 1 && gating != 2) p.fail(concat("expert_gating_func ", gating, " is not supported"));
    if (d_conv < 2) p.fail(concat("ssm.conv_kernel ", d_conv, " must be at least 2"));
    if (kda_head == 0 || kda_head > kMaxDeltaNetKeyGate)
      p.fail(concat("kda.head_dim ", kda_head, " must be 1..", kMaxDeltaNetKeyGate));
    check_mla_keys(p, head_dim, head_dim_v, n_head_kv, kv_lora, head_k_mla, rope.n_rot);
  }

  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    n_ff_exp = static_cast<uint32_t>(d.n_ff_exp > 0 ? d.n_ff_exp : d.n_ff);
    return ok_status();
  }

  MoeOptions moe_options() const {
    MoeOptions o = moe.options(/*normalize=*/true);
    o.gating = gating == 2 ? MoeGating::kSigmoid : MoeGating::kSoftmax;
    return o;
  }
  int64_t kda_width() const { return int64_t{kda_head} * n_head; }
};

struct KdaWeights {
  Tensor* q = nullptr;  // attn_q [n_embd, hd·H], likewise k and v
  Tensor* k = nullptr;
  Tensor* v = nullptr;
  Tensor* conv_q = nullptr;  // ssm_conv1d_{q,k,v} [d_conv, hd·H], F32
  Tensor* conv_k = nullptr;
  Tensor* conv_v = nullptr;
  Tensor* f_a = nullptr;   // ssm_f_a [n_embd, hd]
  Tensor* f_b = nullptr;   // ssm_f_b [hd, hd·H]
  Tensor* beta = nullptr;  // ssm_beta [n_embd, H]
  Tensor* a = nullptr;     // ssm_a [1, H]: −exp(A_log)
  Tensor* dt_b = nullptr;  // ssm_dt.bias [hd·H]
  Tensor* g_a = nullptr;   // ssm_g_a [n_embd, hd]
  Tensor* g_b = nullptr;   // ssm_g_b [hd, hd·H]
  Tensor* norm = nullptr;  // ssm_norm [hd]
  Tensor* out = nullptr;   // attn_output [hd·H, n_embd]
};

class KimiLinearModel final : public DecoderModel<KimiLinearHParams> {
 public:
  static constexpr const char* kArchitecture = "kimi-linear";

  std::vector<HybridLayer> layers;
  std::vector<MlaWeights> mla;  // per block (empty for KDA blocks)
  std::vector<KdaWeights> kda;  // per block (empty for attention blocks)

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd, heads = h.n_head;
    bind_embeddings(b, Output::kOwnOrTied);
    mla.resize(h.n_layer);
    kda.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      const auto name = [il](const char* pattern) { return format_name(pattern, il); };
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      const bool attention = h.has_attention(static_cast<uint32_t>(il));
      add_hybrid_layer(layers, attention);
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      if (attention) {
        MlaWeights& a = mla[static_cast<size_t>(il)];
        a.q = b.require(name("blk.%d.attn_q.weight"), {n_embd, heads * h.head_k_mla});
        a.kv_a = b.require(name("blk.%d.attn_kv_a_mqa.weight"), {n_embd, int64_t{h.kv_lora} + h.rope.n_rot});
        a.kv_a_norm = b.require(name("blk.%d.attn_kv_a_norm.weight"), {h.kv_lora});
        a.k_b = b.require(name("blk.%d.attn_k_b.weight"), {h.head_k_mla - h.rope.n_rot, h.kv_lora, heads});
        a.v_b = b.require(name("blk.%d.attn_v_b.weight"), {h.kv_lora, h.head_v_mla, heads});
        a.output = b.require(name("blk.%d.attn_output.weight"), {heads * h.head_v_mla, n_embd});
      } else {
        KdaWeights& k = kda[static_cast<size_t>(il)];
        const int64_t width = h.kda_width(), hd = h.kda_head;
        k.q = b.require(name("blk.%d.attn_q.weight"), {n_embd, width});
        k.k = b.require(name("blk.%d.attn_k.weight"), {n_embd, width});
        k.v = b.require(name("blk.%d.attn_v.weight"), {n_embd, width});
        // GGUF [d_conv, 1, hd·H] (a trailing 1 as well in unquantized files).
        k.conv_q = b.require_f32(name("blk.%d.ssm_conv1d_q.weight"), {h.d_conv, 1, width});
        k.conv_k = b.require_f32(name("blk.%d.ssm_conv1d_k.weight"), {h.d_conv, 1, width});
        k.conv_v = b.require_f32(name("blk.%d.ssm_conv1d_v.weight"), {h.d_conv, 1, width});
        k.f_a = b.require(name("blk.%d.ssm_f_a.weight"), {n_embd, hd});
        k.f_b = b.require(name("blk.%d.ssm_f_b.weight"), {hd, width});
        k.beta = b.require(name("blk.%d.ssm_beta.weight"), {n_embd, heads});
        k.a = b.require(name("blk.%d.ssm_a"), {1, heads});  // no ".weight", as llama.cpp names it
        k.dt_b = b.require(name("blk.%d.ssm_dt.bias"), {width});
        k.g_a = b.require(name("blk.%d.ssm_g_a.weight"), {n_embd, hd});
        k.g_b = b.require(name("blk.%d.ssm_g_b.weight"), {hd, width});
        k.norm = b.require(name("blk.%d.ssm_norm.weight"), {hd});
        k.out = b.require(name("blk.%d.attn_output.weight"), {width, n_embd});
      }
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, n_embd, Presence::kRequired);
      if (static_cast<uint32_t>(il) < h.n_dense_lead) {
        l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {});
        continue;
      }
      l.moe = bind_moe(b, il, n_embd, h.n_ff_exp, h.moe.n_expert);
      l.moe.selection_bias = b.require(name("blk.%d.exp_probs_b.bias"), {h.moe.n_expert});
      l.moe.shared = bind_shared_experts(b, il, n_embd, int64_t{h.n_ff_exp} * std::max(h.n_shared, 1u));
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_layers.clear();
    s.kv_windows.clear();
    KvRope none = h.kv_rope(/*neox=*/false);
    none.rotated = false;  // no RoPE: nothing to rotate when positions shift
    const int64_t taps = int64_t{h.d_conv} - 1, width = h.kda_width();
    for (const HybridLayer& layer : layers) {
      if (layer.attention) {
        s.kv_layers.push_back(h.kv_layer());
        s.kv_windows.push_back(0);
        s.kv_rope.push_back(none);
      } else {
        RecurrentLayerShape state;
        for (int conv = 0; conv < 3; ++conv) state.states.push_back({{taps, width, 1}});  // q, k, v
        state.states.push_back({{h.kda_head, h.kda_head, h.n_head}});                     // S [d_v, d_k, H]
        s.recurrent_layers.push_back(state);
      }
    }
    return s;
  }

  // One KDA layer: x [n_embd, T] (normed) -> [n_embd, T].
  Tensor* build_kda(ForwardContext& fx, Tensor* x, const KdaWeights& kw, int state_layer, int il) const {
    Graph& g = fx.graph;
    const auto name = [il](Tensor* t, const char* base) { return ForwardContext::name(t, base, il); };
    const int64_t hd = h.kda_head, heads = h.n_head, width = h.kda_width(), n_tokens = x->ne[1];
    RecurrentState& memory = fx.state();
    Tensor* slots = fx.state_slots_input();
    const auto short_conv = [&](Tensor* projection, Tensor* weight, int state, const char* label) {
      Tensor* planes = memory.state(state_layer, state);  // [d_conv − 1, width, 1, S]
      planes = g.reshape(planes, {planes->ne[0], planes->ne[1], planes->ne[3], 1});
      Tensor* y = g.ssm_conv(fx.build_linear(projection, x, nullptr),
                             g.reshape(weight, {h.d_conv, width, 1, 1}), planes, slots);
      return name(g.silu(y), label);
    };
    Tensor* q = short_conv(kw.q, kw.conv_q, 0, "q_conv");
    Tensor* k = short_conv(kw.k, kw.conv_k, 1, "k_conv");
    Tensor* v = short_conv(kw.v, kw.conv_v, 2, "v_conv");
    q = name(g.l2_norm(g.reshape(q, {hd, heads, n_tokens, 1}), h.norm_eps), "q_normed");
    k = name(g.l2_norm(g.reshape(k, {hd, heads, n_tokens, 1}), h.norm_eps), "k_normed");
    v = g.reshape(v, {hd, heads, n_tokens, 1});

    Tensor* decay = fx.build_linear(kw.f_b, fx.build_linear(kw.f_a, x, nullptr), nullptr);  // [width, T]
    decay = g.softplus(g.add(decay, kw.dt_b));
    Tensor* gate = name(g.mul(g.reshape(decay, {hd, heads, n_tokens, 1}), kw.a), "kda_g1");  // [hd, H, T]
    Tensor* beta = name(g.sigmoid(fx.build_linear(kw.beta, x, nullptr)), "kda_beta");        // [H, T]

    DeltaNetParams params;
    params.scale = 1.0f / std::sqrt(static_cast<float>(hd));
    Tensor* y = name(g.gated_delta_net(q, k, v, gate, beta, memory.state(state_layer, 3), slots, params),
                     "attn_output");
    y = g.reshape(y, {hd, heads, n_tokens, 1});
    y = fx.build_norm(y, NormWeights{kw.norm, nullptr}, NormKind::kRms, h.norm_eps, "kda_normed", il);
    Tensor* out_gate = fx.build_linear(kw.g_b, fx.build_linear(kw.g_a, x, nullptr), nullptr);
    y = g.mul(y, g.sigmoid(g.reshape(out_gate, {hd, heads, n_tokens, 1})));
    y = g.reshape(y, {width, n_tokens, 1, 1});
    return name(fx.build_linear(kw.out, y, nullptr), "kda_out");
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* x = fx.build_inp_embd(w.token_embd);
    AttentionOptions attention = h.attention(/*neox=*/false);
    MlaOptions mla_options;
    mla_options.n_head = static_cast<int32_t>(h.n_head);
    mla_options.nope = static_cast<int32_t>(h.head_k_mla - h.rope.n_rot);
    mla_options.rope = static_cast<int32_t>(h.rope.n_rot);
    mla_options.kv_lora = static_cast<int32_t>(h.kv_lora);
    mla_options.head_dim_v = static_cast<int32_t>(h.head_v_mla);
    mla_options.scale = 1.0f / std::sqrt(static_cast<float>(h.head_k_mla));
    mla_options.norm_eps = h.norm_eps;
    mla_options.rotate = false;
    BlockOptions attention_block{.norm_eps = h.norm_eps, .moe = h.moe_options()};
    attention_block.attention = [this, mla_options](ForwardContext& f, Tensor* in,
                                                    const AttentionOptions& layer, int il) {
      MlaOptions o = mla_options;
      o.attention = layer;
      return build_mla_attn(f, in, mla[static_cast<size_t>(il)], o, il);
    };
    BlockOptions kda_block = attention_block;
    kda_block.attention = [this](ForwardContext& f, Tensor* in, const AttentionOptions&, int il) {
      const auto at = static_cast<size_t>(il);
      return build_kda(f, in, kda[at], layers[at].index, il);
    };
    x = build_hybrid_blocks(fx, x, shape_, w, attention, layers, attention_block, kda_block);
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }
};

const ArchitectureRegistration kKimiLinear{Architecture{
    KimiLinearModel::kArchitecture,
    KimiLinearModel::create<KimiLinearModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<KimiLinearHParams>(KimiLinearModel::kArchitecture, dims, out,
                                                 [&dims](KimiLinearHParams& h) {
                                                   h.kv_heads_per_layer = true;
                                                   h.norm_eps = 1e-6f;
                                                   // Kimi's proportions of the head size n_embd / n_head (128
                                                   // there): keys of 128 + 64, values of 128, a latent of
                                                   // 512; KDA heads of the same size, a kernel of 4.
                                                   const uint32_t head = h.head_dim;
                                                   h.rope.n_rot = std::max(2u, head / 2 / 2 * 2);
                                                   h.head_k_mla = head + h.rope.n_rot;
                                                   h.head_v_mla = head;
                                                   h.kv_lora = 4 * head;
                                                   h.head_dim = h.kv_lora + h.rope.n_rot;
                                                   h.head_dim_v = h.kv_lora;
                                                   h.n_head_kv = 1;
                                                   h.kda_head = head;
                                                   h.d_conv = 4;
                                                   // Dense FFNs before the last block's experts: routing
                                                   // (sigmoid scores within ~1e-3 of each other in a random
                                                   // model) flips on last-bit differences, and one mixture
                                                   // keeps the comparisons with llama.cpp about the rest
                                                   // (deepseek2's conformance cases do the same).
                                                   h.n_dense_lead = h.n_layer > 1 ? h.n_layer - 1 : 0;
                                                   if (dims.variant == "dense")
                                                     h.n_dense_lead = h.n_layer;  // no experts at all
                                                   h.n_shared = 1;
                                                   h.gating = 2;
                                                   h.moe.weights_scale = 2.5f;
                                                   // Latent attention in every fourth block from the fourth
                                                   // (Kimi: 3 KDA, then MLA).
                                                   h.n_head_kv_layers.assign(h.n_layer, 0);
                                                   for (uint32_t il = 3; il < h.n_layer; il += 4)
                                                     h.n_head_kv_layers[il] = 1;
                                                 });
    },
    // Four blocks: KDA, KDA, KDA (dense FFNs), latent attention (experts).
    {
        {"tiny", {64, 4, 4, 1, 192, 512, 512, 8, 2, 64}},
        {"small", {256, 4, 8, 1, 512, 1024, 1024, 8, 2, 128}},
        // Every block's FFN dense (conformance of the quantized types without routing flips).
        {"tiny-dense", {64, 4, 4, 1, 192, 512, 512, 8, 2, 64, -1, "dense"}},
        // Kimi-Linear-48B-A3B: 27 blocks of 2304, 32 heads, 256 experts (8 used) of 1024.
        {"48b-a3b", {2304, 27, 32, 1, 9216, 163840, 8192, 256, 8, 1024}},
    },
}};

}  // namespace
}  // namespace sinter
