// DeepSeek-V2/V3 (and their smaller siblings such as DeepSeek-V2-Lite): multi-head latent
// attention (model/mla.h: the KV cache holds one latent per token), RoPE on pairs (2i, 2i+1) of
// a part of each head, the first `leading_dense_block_count` blocks with a dense FFN and the
// others a mixture of experts with shared experts, softmax (V2) or sigmoid (V3) routing with an
// optional selection bias, renormalization and a routed scaling factor. Files whose key and
// value matrices are split per head (attn_k_b, attn_v_b: today's converters) are read; an older
// file's fused attn_kv_b is reported as unexpected and its attn_k_b as missing.
#include <cmath>

#include "model/decoder.h"
#include "model/mla.h"

namespace sinter {
namespace {

struct DeepSeek2HParams : DecoderHParams {
  MoeHParams moe;
  uint32_t n_dense_lead = 0;
  uint32_t q_lora = 0;      // 0: queries projected directly (the Lite models)
  uint32_t kv_lora = 0;     // the latent's size
  uint32_t head_k_mla = 0;  // nope + rope per head
  uint32_t head_v_mla = 0;
  uint32_t n_ff_exp = 0;
  uint32_t n_shared = 0;
  bool weights_norm = false;
  uint32_t gating = 0;  // 0: not set (softmax, as V2 files)
  float yarn_log_mul = 0.0f;
  uint32_t n_groups = 0;
  uint32_t n_groups_used = 0;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    moe.declare(p, /*required=*/true);
    p.optional("{arch}.leading_dense_block_count", n_dense_lead, 0u);
    p.optional("{arch}.attention.q_lora_rank", q_lora, 0u);
    p.required("{arch}.attention.kv_lora_rank", kv_lora);
    p.required("{arch}.attention.key_length_mla", head_k_mla);
    p.required("{arch}.attention.value_length_mla", head_v_mla);
    p.required("{arch}.expert_feed_forward_length", n_ff_exp);
    p.optional("{arch}.expert_shared_count", n_shared, 0u);
    p.optional("{arch}.expert_weights_norm", weights_norm, false);
    p.optional("{arch}.expert_gating_func", gating, 0u);
    p.optional("{arch}.rope.scaling.yarn_log_multiplier", yarn_log_mul, 0.0f);
    p.optional("{arch}.expert_group_count", n_groups, 0u);
    p.optional("{arch}.expert_group_used_count", n_groups_used, n_groups);
    if (!p.status()) return;
    if (n_groups > 1 &&
        (moe.n_expert % n_groups != 0 || moe.n_expert / n_groups < 2 || n_groups_used == 0 ||
         n_groups_used > n_groups || moe.n_expert_used > n_groups_used * (moe.n_expert / n_groups)))
      p.fail(concat("expert_group_count ", n_groups, " and expert_group_used_count ", n_groups_used,
                    " do not fit ", moe.n_expert, " experts with ", moe.n_expert_used, " used"));
    if (gating > 2) p.fail(concat("expert_gating_func ", gating, " is not supported (1 softmax, 2 sigmoid)"));
    check_mla_keys(p, head_dim, head_dim_v, n_head_kv, kv_lora, head_k_mla, rope.n_rot);
  }
  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    n_ff_exp = static_cast<uint32_t>(d.n_ff_exp > 0 ? d.n_ff_exp : d.n_ff);
    return ok_status();
  }
  MoeOptions moe_options() const {
    MoeOptions o = moe.options(weights_norm);
    o.gating = gating == 2 ? MoeGating::kSigmoid : MoeGating::kSoftmax;
    o.groups = static_cast<int32_t>(n_groups);
    o.groups_used = static_cast<int32_t>(n_groups_used);
    return o;
  }
  uint32_t nope() const { return head_k_mla - rope.n_rot; }
  // YaRN: the rotation keeps its magnitude (llama.cpp cancels ggml's factor when the file has
  // a log multiplier) and the scores are scaled by mscale² instead.
  float yarn_factor() const {
    return rope.scaling_type == "yarn" && rope.scaling_factor > 1.0f ? rope.scaling_factor : 1.0f;
  }
  float score_scale() const {
    const float m = 1.0f + 0.1f * yarn_log_mul * std::log(yarn_factor());
    return m * m / std::sqrt(static_cast<float>(head_k_mla));
  }
  RopeParams rope_params() const {
    RopeParams r = rope.params(/*neox=*/false, n_ctx_train);
    if (yarn_factor() > 1.0f && yarn_log_mul != 0.0f) r.attn_factor /= 1.0f + 0.1f * std::log(yarn_factor());
    return r;
  }
};

class DeepSeek2Model final : public DecoderModel<DeepSeek2HParams> {
 public:
  static constexpr const char* kArchitecture = "deepseek2";
  std::vector<MlaWeights> mla;

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    mla.resize(h.n_layer);
    const int64_t n_embd = h.n_embd, heads = h.n_head, q_width = heads * h.head_k_mla;
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      const auto name = [il](const char* pattern) { return format_name(pattern, il); };
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      MlaWeights& a = mla[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      if (h.q_lora > 0) {
        a.q_a = b.require(name("blk.%d.attn_q_a.weight"), {n_embd, h.q_lora});
        a.q_a_norm = b.require(name("blk.%d.attn_q_a_norm.weight"), {h.q_lora});
        a.q_b = b.require(name("blk.%d.attn_q_b.weight"), {h.q_lora, q_width});
      } else {
        a.q = b.require(name("blk.%d.attn_q.weight"), {n_embd, q_width});
      }
      a.kv_a = b.require(name("blk.%d.attn_kv_a_mqa.weight"), {n_embd, int64_t{h.kv_lora} + h.rope.n_rot});
      a.kv_a_norm = b.require(name("blk.%d.attn_kv_a_norm.weight"), {h.kv_lora});
      a.k_b = b.require(name("blk.%d.attn_k_b.weight"), {h.nope(), h.kv_lora, heads});
      a.v_b = b.require(name("blk.%d.attn_v_b.weight"), {h.kv_lora, h.head_v_mla, heads});
      a.output = b.require(name("blk.%d.attn_output.weight"), {heads * h.head_v_mla, n_embd});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, n_embd, Presence::kRequired);
      if (static_cast<uint32_t>(il) < h.n_dense_lead) {
        l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {});
        continue;
      }
      l.moe = bind_moe(b, il, n_embd, h.n_ff_exp, h.moe.n_expert);
      l.moe.selection_bias =
          bind_weight(b, name("blk.%d.exp_probs_b.bias"), {h.moe.n_expert}, Presence::kFeature);
      if (h.n_shared > 0) l.moe.shared = bind_shared_experts(b, il, n_embd, int64_t{h.n_ff_exp} * h.n_shared);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, KvRope{true, static_cast<int32_t>(h.head_dim), h.rope_params(), nullptr});
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    AttentionOptions attention = h.attention(/*neox=*/false);
    attention.rope = h.rope_params();
    MlaOptions mla_options;
    mla_options.n_head = static_cast<int32_t>(h.n_head);
    mla_options.nope = static_cast<int32_t>(h.nope());
    mla_options.rope = static_cast<int32_t>(h.rope.n_rot);
    mla_options.kv_lora = static_cast<int32_t>(h.kv_lora);
    mla_options.head_dim_v = static_cast<int32_t>(h.head_v_mla);
    mla_options.scale = h.score_scale();
    mla_options.norm_eps = h.norm_eps;
    BlockOptions block{.norm_eps = h.norm_eps, .moe = h.moe_options()};
    block.attention = [this, mla_options](ForwardContext& f, Tensor* x, const AttentionOptions& layer,
                                          int il) {
      MlaOptions o = mla_options;
      o.attention = layer;
      return build_mla_attn(f, x, mla[static_cast<size_t>(il)], o, il);
    };
    return build_decoder(fx, shape_, w, attention, {.block = block});
  }
};

const ArchitectureRegistration kDeepSeek2{Architecture{
    DeepSeek2Model::kArchitecture,
    DeepSeek2Model::create<DeepSeek2Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<DeepSeek2HParams>(
          DeepSeek2Model::kArchitecture, dims, out, [&dims](DeepSeek2HParams& h) {
            // Latent attention of the head size n_embd / n_head: a quarter rotated, a latent of
            // twice the head size.
            const uint32_t head = h.head_dim;
            h.rope.n_rot = std::max(2u, head / 4 / 2 * 2);
            h.head_k_mla = head;
            h.head_v_mla = head;
            h.kv_lora = 2 * head;
            h.head_dim = h.kv_lora + h.rope.n_rot;
            h.head_dim_v = h.kv_lora;
            h.n_head_kv = 1;
            h.norm_eps = 1e-6f;
            h.n_dense_lead = 1;
            h.n_shared = 2;
            if (dims.variant == "v2-lite") {  // DeepSeek-V2-Lite: no query compression, softmax routing
              // Its proportions of the head size n_embd / n_head (128 there: 128 + 64 rotated
              // for keys, 128 for values, a latent of 512).
              h.q_lora = 0;
              h.rope.n_rot = head / 2;
              h.head_k_mla = head + head / 2;
              h.head_v_mla = head;
              h.kv_lora = 4 * head;
              h.head_dim = h.kv_lora + h.rope.n_rot;
              h.head_dim_v = h.kv_lora;
              h.gating = 1;
              h.moe.weights_scale = 1.0f;  // routed_scaling_factor, as the Lite files carry it
              return;
            }
            // V3's features: compressed queries, sigmoid routing with a selection bias, the
            // chosen weights renormalized and scaled.
            h.q_lora = 3 * head / 2;
            h.gating = 2;
            h.weights_norm = true;
            h.moe.weights_scale = 2.5f;
            // V3's grouped selection: four groups, the best two compete (when the experts
            // divide into groups that can hold the experts used).
            if (h.moe.n_expert % 4 == 0 && h.moe.n_expert / 4 >= 2 &&
                h.moe.n_expert_used <= h.moe.n_expert / 2) {
              h.n_groups = 4;
              h.n_groups_used = 2;
            }
          });
    },
    {
        {"tiny", {64, 2, 4, 1, 192, 512, 512, 8, 2, 64}},
        {"small", {256, 3, 8, 1, 512, 1024, 1024, 8, 2, 128}},
        // DeepSeek-V2-Lite: 27 layers of 2048, 16 heads, 64 experts (6 used) of 1408, 2 shared.
        {"v2-lite", {2048, 27, 16, 1, 10944, 102400, 4096, 64, 6, 1408, -1, "v2-lite"}},
    },
}};

}  // namespace
}  // namespace sinter
