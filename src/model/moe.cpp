#include "model/moe.h"

#include <limits>

namespace sinter {

void MoeHParams::declare(HParams& p, bool required) {
  // A dense model of an architecture whose files may have experts gets no expert keys.
  if (!required && p.mode() == HParams::Mode::kWrite && n_expert == 0) return;
  if (required) {
    p.required("{arch}.expert_count", n_expert);
    p.required("{arch}.expert_used_count", n_expert_used);
  } else {
    p.optional("{arch}.expert_count", n_expert, 0u);
    p.optional("{arch}.expert_used_count", n_expert_used, 0u);
  }
  p.optional("{arch}.expert_weights_scale", weights_scale, 0.0f);
  if (!p.status()) return;
  if (required && n_expert == 0) p.fail("expert_count must be positive");
  if (n_expert > 0 && (n_expert_used == 0 || n_expert_used > n_expert))
    p.fail(concat("expert_used_count ", n_expert_used, " must be between 1 and expert_count ", n_expert));
  if (n_expert == 0 && n_expert_used != 0) p.fail("expert_used_count is set without expert_count");
}

void MoeHParams::set_synth_dims(const SynthDims& d) {
  n_expert = static_cast<uint32_t>(d.n_expert > 0 ? d.n_expert : 8);
  n_expert_used = static_cast<uint32_t>(d.n_expert_used > 0 ? d.n_expert_used : 2);
}

MoeOptions MoeHParams::options(bool normalize) const {
  MoeOptions o;
  o.n_expert = static_cast<int32_t>(n_expert);
  o.n_expert_used = static_cast<int32_t>(n_expert_used);
  o.normalize = normalize;
  o.scale = weights_scale != 0.0f ? weights_scale : 1.0f;
  return o;
}

MoeWeights bind_moe(WeightBinder& b, int il, int64_t n_embd, int64_t n_ff_exp, int64_t n_expert) {
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  MoeWeights w;
  w.router = b.require(name("blk.%d.ffn_gate_inp.weight"), {n_embd, n_expert});
  w.gate = b.require(name("blk.%d.ffn_gate_exps.weight"), {n_embd, n_ff_exp, n_expert});
  w.up = b.require(name("blk.%d.ffn_up_exps.weight"), {n_embd, n_ff_exp, n_expert});
  w.down = b.require(name("blk.%d.ffn_down_exps.weight"), {n_ff_exp, n_embd, n_expert});
  return w;
}

void bind_moe_biases(WeightBinder& b, int il, MoeWeights& w, int64_t n_embd, int64_t n_ff_exp,
                     int64_t n_expert) {
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  w.router_bias = b.require(name("blk.%d.ffn_gate_inp.bias"), {n_expert});
  w.gate_bias = b.require(name("blk.%d.ffn_gate_exps.bias"), {n_ff_exp, n_expert});
  w.up_bias = b.require(name("blk.%d.ffn_up_exps.bias"), {n_ff_exp, n_expert});
  w.down_bias = b.require(name("blk.%d.ffn_down_exps.bias"), {n_embd, n_expert});
}

FfnWeights bind_shared_experts(WeightBinder& b, int il, int64_t n_embd, int64_t n_ff_shared) {
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  FfnWeights w;
  w.gate = b.require(name("blk.%d.ffn_gate_shexp.weight"), {n_embd, n_ff_shared});
  w.up = b.require(name("blk.%d.ffn_up_shexp.weight"), {n_embd, n_ff_shared});
  w.down = b.require(name("blk.%d.ffn_down_shexp.weight"), {n_ff_shared, n_embd});
  return w;
}

Tensor* bind_shared_expert_gate(WeightBinder& b, int il, int64_t n_embd) {
  return b.require(format_name("blk.%d.ffn_gate_inp_shexp.weight", il), {n_embd});
}

Tensor* build_moe_ffn(ForwardContext& fx, Tensor* x, const MoeWeights& w, const MoeOptions& o, int il,
                      Tensor* router_x) {
  Graph& g = fx.graph;
  const auto name = [il](Tensor* t, const char* base) { return ForwardContext::name(t, base, il); };
  const int64_t n_embd = x->ne[0], tokens = x->ne[1], k = o.n_expert_used;
  Tensor* logits = name(fx.build_linear(w.router, router_x != nullptr ? router_x : x, w.router_bias),
                        "ffn_moe_logits");  // [n_expert, T]
  Tensor* probs = logits;
  if (o.gating == MoeGating::kSoftmax) probs = name(g.softmax(logits), "ffn_moe_probs");
  if (o.gating == MoeGating::kSigmoid) probs = name(g.sigmoid(logits), "ffn_moe_probs");
  Tensor* selection =
      w.selection_bias != nullptr ? name(g.add(probs, w.selection_bias), "ffn_moe_probs_biased") : probs;
  Tensor* ids = o.groups > 1 ? g.top_k_grouped(selection, static_cast<int32_t>(k), o.groups, o.groups_used)
                             : g.top_k(selection, static_cast<int32_t>(k));
  name(ids, "ffn_moe_topk");  // I32 [k, T]
  // The unbiased probabilities of the chosen experts: [1, n_expert, T] by ids [k, T] -> [1, k, T].
  Tensor* weights = g.get_rows(g.reshape(probs, {1, probs->ne[0], tokens, 1}), ids);
  weights = name(g.reshape(weights, {k, tokens, 1, 1}), "ffn_moe_weights");
  if (o.gating == MoeGating::kSoftmaxOfChosen) weights = name(g.softmax(weights), "ffn_moe_weights_softmax");
  if (o.normalize) {
    // The sum kept above F16's smallest normal, as llama.cpp clamps it.
    Tensor* sum = g.clamp(g.sum_rows(weights), 6.103515625e-5f, std::numeric_limits<float>::infinity());
    weights = name(g.div(weights, name(sum, "ffn_moe_weights_sum")), "ffn_moe_weights_norm");
  }
  if (o.scale != 1.0f) weights = name(g.scale(weights, o.scale), "ffn_moe_weights_scaled");

  // Each chosen expert's bias column added to its product: the bias [n, n_expert] looked up by
  // all k·T ids at once.
  Tensor* all_ids = g.reshape(ids, {k * tokens, 1, 1, 1});
  const auto biased = [&](Tensor* product, Tensor* bias, const char* base) {
    if (bias == nullptr) return product;
    Tensor* columns = g.reshape(g.get_rows(bias, all_ids), product->ne);
    return name(g.add(product, columns), base);
  };
  Tensor* rows = g.reshape(x, {n_embd, 1, tokens, 1});
  Tensor* up = name(g.mul_mat_id(w.up, rows, ids), "ffn_moe_up");  // [n_ff_exp, k, T]
  up = biased(up, w.up_bias, "ffn_moe_up_biased");
  Tensor* act = nullptr;
  if (w.gate == nullptr) {
    act = fx.build_activation(up, o.activation);
  } else {
    Tensor* gate = name(g.mul_mat_id(w.gate, rows, ids), "ffn_moe_gate");
    gate = biased(gate, w.gate_bias, "ffn_moe_gate_biased");
    act = o.swiglu_limit > 0.0f                       ? g.swiglu_oai(gate, up, o.swiglu_alpha, o.swiglu_limit)
          : o.activation == FfnActivation::kGeluGated ? g.geglu(gate, up)
                                                      : g.swiglu(gate, up);
  }
  name(act, "ffn_moe_act");
  Tensor* experts = name(g.mul_mat_id(w.down, act, ids), "ffn_moe_down");  // [n_embd, k, T]
  experts = biased(experts, w.down_bias, "ffn_moe_down_biased");
  Tensor* out = name(g.weighted_sum(experts, weights), "ffn_moe_out");  // [n_embd, T]
  if (w.shared.down != nullptr) {
    Tensor* shared = name(fx.build_ffn(x, w.shared, FfnActivation::kSiluGated, il), "ffn_shexp");
    if (w.shared_gate != nullptr) {
      // [n_embd] as a matrix of one row: [1, T], one value per token's row of `shared`.
      Tensor* gate = name(g.sigmoid(fx.build_linear(w.shared_gate, x, nullptr)), "ffn_shexp_gate");
      shared = name(g.mul(shared, gate), "ffn_shexp_gated");
    }
    out = name(g.add(out, shared), "ffn_moe_shared_out");
  }
  return out;
}

}  // namespace sinter
