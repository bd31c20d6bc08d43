#include "graph/graph.h"

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>

namespace sinter {
namespace {

// Builder misuse is a bug in model code, not bad input: fail loudly at build time.
void require(bool condition, const char* what, const Tensor* a, const Tensor* b = nullptr) {
  if (condition) return;
  std::string message = std::string("graph: ") + what + ": " + a->name + " " + a->shape_string();
  if (b != nullptr) message += " and " + b->name + " " + b->shape_string();
  throw std::logic_error(message);
}

bool same_shape(const Tensor* a, const Tensor* b) { return a->ne == b->ne; }

// Ops read their operands as contiguous rows: a strided view (a transpose) is copy()'d first.
void require_contiguous(const Tensor* t, const char* what) { require(t->is_contiguous(), what, t); }

// b broadcasts over a when each of b's dimensions is 1 or equal to a's.
bool broadcasts(const Tensor* a, const Tensor* b) {
  for (int i = 0; i < kMaxDims; ++i) {
    if (b->ne[i] != 1 && b->ne[i] != a->ne[i]) return false;
  }
  return b->ne[0] == a->ne[0];
}

// b holds one value per row of a ([1, rows...]), its other dimensions 1 or a's.
bool broadcasts_per_row(const Tensor* a, const Tensor* b) {
  for (int i = 1; i < kMaxDims; ++i) {
    if (b->ne[i] != 1 && b->ne[i] != a->ne[i]) return false;
  }
  return b->ne[0] == 1;
}

// F32 values, each token's contiguous (dimensions below `token_dim` packed), tokens at any
// stride (a multiple of 4 bytes), no dimension beyond: what the recurrent ops read. Dimensions of
// one value may have any stride.
bool tokens_packed(const Tensor* t, int token_dim) {
  if (t->type != DType::F32 || t->nb[token_dim] % sizeof(float) != 0) return false;
  size_t stride = sizeof(float);
  for (int i = 0; i < token_dim; ++i) {
    if (t->nb[i] != stride && t->ne[i] != 1) return false;
    stride *= static_cast<size_t>(t->ne[i]);
  }
  for (int i = token_dim + 1; i < kMaxDims; ++i) {
    if (t->ne[i] != 1) return false;
  }
  return true;
}

// A recurrent op's state: F32, contiguous, of this shape (the last dimension, the slots, >= 1).
bool is_state(const Tensor* state, std::array<int64_t, kMaxDims> ne) {
  return state->type == DType::F32 && state->is_contiguous() && state->ne == ne && state->elements() > 0;
}

// A recurrent op's slots: I32 [n_tokens], or [n_tokens, 2] with snapshot planes, contiguous.
bool is_slots(const Tensor* slots, int64_t n_tokens) {
  return slots->type == DType::I32 && slots->is_contiguous() && slots->ne[0] == n_tokens &&
         (slots->ne[1] == 1 || slots->ne[1] == 2) && slots->ne[2] == 1 && slots->ne[3] == 1;
}
void require_slots(const Tensor* slots, int64_t n_tokens, const char* what, const Tensor* x) {
  require(is_slots(slots, n_tokens), what, slots, x);
}

void store_rope_params(Tensor* node, const RopeParams& p) {
  node->params[kRopeNRot] = p.n_rot;
  node->params[kRopeNeox] = p.neox ? 1 : 0;
  node->params[kRopeNCtxOrig] = p.n_ctx_orig;
  node->set_param_float(kRopeFreqBase, p.freq_base);
  node->set_param_float(kRopeFreqScale, p.freq_scale);
  node->set_param_float(kRopeExtFactor, p.ext_factor);
  node->set_param_float(kRopeAttnFactor, p.attn_factor);
  node->set_param_float(kRopeBetaFast, p.beta_fast);
  node->set_param_float(kRopeBetaSlow, p.beta_slow);
}

}  // namespace

RopeParams rope_params_of(const Tensor& node) {
  RopeParams p;
  p.n_rot = node.params[kRopeNRot];
  p.neox = node.params[kRopeNeox] != 0;
  p.n_ctx_orig = node.params[kRopeNCtxOrig];
  p.freq_base = node.param_float(kRopeFreqBase);
  p.freq_scale = node.param_float(kRopeFreqScale);
  p.ext_factor = node.param_float(kRopeExtFactor);
  p.attn_factor = node.param_float(kRopeAttnFactor);
  p.beta_fast = node.param_float(kRopeBetaFast);
  p.beta_slow = node.param_float(kRopeBetaSlow);
  return p;
}

Tensor* Graph::new_node(Op op, DType type, std::array<int64_t, kMaxDims> ne,
                        std::initializer_list<Tensor*> sources) {
  Tensor& t = storage_.emplace_back();
  t.op = op;
  t.type = type;
  t.ne = ne;
  t.nb = contiguous_strides(type, ne);
  int i = 0;
  for (Tensor* s : sources) t.src[i++] = s;
  t.name = op_name(op);
  all_.push_back(&t);
  return &t;
}

Tensor* Graph::named(Tensor* t, const std::string& base, int layer) {
  t->name = layer < 0 ? base : base + "-" + std::to_string(layer);
  return t;
}

Tensor* Graph::input(const std::string& name, DType type, std::array<int64_t, kMaxDims> ne) {
  Tensor* t = new_node(Op::kLeaf, type, ne, {});
  t->role = TensorRole::kInput;
  t->name = name;
  inputs_.push_back(t);
  return t;
}

Tensor* Graph::get_rows(Tensor* table, Tensor* ids) {
  require(ids->type == DType::I32 && ids->ne[2] == 1 && ids->ne[3] == 1, "get_rows needs I32 ids [k, B]",
          ids);
  require(table->ne[2] == ids->ne[1] && table->ne[3] == 1, "get_rows: a table [n, rows, B] for ids [k, B]",
          table, ids);
  require_contiguous(table, "get_rows of a strided view (copy it first)");
  require_contiguous(ids, "get_rows ids must be contiguous");
  return new_node(Op::kGetRows, DType::F32, {table->ne[0], ids->ne[0], ids->ne[1], 1}, {table, ids});
}

Tensor* Graph::mul_mat_id(Tensor* experts, Tensor* x, Tensor* ids) {
  require(experts->ne[0] == x->ne[0] && experts->ne[3] == 1, "mul_mat_id inner dimensions differ", experts,
          x);
  require(ids->type == DType::I32 && ids->ne[1] == x->ne[2] && ids->ne[2] == 1 && ids->ne[3] == 1,
          "mul_mat_id ids [k, n_tokens]", ids, x);
  require(x->type == DType::F32 && (x->ne[1] == 1 || x->ne[1] == ids->ne[0]) && x->ne[3] == 1,
          "mul_mat_id x [n_in, 1 or k, n_tokens]", x, ids);
  require_contiguous(experts, "mul_mat_id of strided experts");
  require_contiguous(x, "mul_mat_id of a strided view (copy it first)");
  require_contiguous(ids, "mul_mat_id ids must be contiguous");
  return new_node(Op::kMulMatId, DType::F32, {experts->ne[1], ids->ne[0], ids->ne[1], 1}, {experts, x, ids});
}

Tensor* Graph::mul_mat(Tensor* weight, Tensor* x) {
  require(weight->ne[0] == x->ne[0], "mul_mat inner dimensions differ", weight, x);
  require(x->type == DType::F32 && weight->ne[2] == 1 && weight->ne[3] == 1, "mul_mat operands", weight, x);
  require_contiguous(weight, "mul_mat of a strided weight");
  require_contiguous(x, "mul_mat of a strided view (copy it first)");
  return new_node(Op::kMatMul, DType::F32, {weight->ne[1], x->ne[1], x->ne[2], x->ne[3]}, {weight, x});
}

Tensor* Graph::rms_norm(Tensor* x, float eps) {
  require_contiguous(x, "rms_norm of a strided view (copy it first)");
  Tensor* t = new_node(Op::kRmsNorm, DType::F32, x->ne, {x});
  t->set_param_float(0, eps);
  return t;
}

Tensor* Graph::norm(Tensor* x, float eps) {
  require_contiguous(x, "norm of a strided view (copy it first)");
  Tensor* t = new_node(Op::kNorm, DType::F32, x->ne, {x});
  t->set_param_float(0, eps);
  return t;
}

Tensor* Graph::add(Tensor* a, Tensor* b) {
  require(broadcasts(a, b), "add shapes", a, b);
  require(a->is_contiguous() && b->is_contiguous(), "add of a strided view (copy it first)", a, b);
  return new_node(Op::kAdd, DType::F32, a->ne, {a, b});
}

Tensor* Graph::sub(Tensor* a, Tensor* b) {
  require(broadcasts(a, b), "sub shapes", a, b);
  require(a->is_contiguous() && b->is_contiguous(), "sub of a strided view (copy it first)", a, b);
  return new_node(Op::kSub, DType::F32, a->ne, {a, b});
}

Tensor* Graph::mul(Tensor* a, Tensor* b) {
  require(broadcasts(a, b) || broadcasts_per_row(a, b), "mul shapes", a, b);
  require(a->is_contiguous() && b->is_contiguous(), "mul of a strided view (copy it first)", a, b);
  return new_node(Op::kMul, DType::F32, a->ne, {a, b});
}

Tensor* Graph::scale(Tensor* a, float s) {
  require_contiguous(a, "scale of a strided view (copy it first)");
  Tensor* t = new_node(Op::kScale, DType::F32, a->ne, {a});
  t->set_param_float(0, s);
  return t;
}

Tensor* Graph::silu(Tensor* a) {
  require_contiguous(a, "silu of a strided view (copy it first)");
  return new_node(Op::kSilu, DType::F32, a->ne, {a});
}

Tensor* Graph::gelu(Tensor* a) {
  require_contiguous(a, "gelu of a strided view (copy it first)");
  return new_node(Op::kGelu, DType::F32, a->ne, {a});
}

Tensor* Graph::softcap(Tensor* a, float cap) {
  require_contiguous(a, "softcap of a strided view (copy it first)");
  require(cap > 0.0f, "softcap needs a positive cap", a);
  Tensor* t = new_node(Op::kSoftcap, DType::F32, a->ne, {a});
  t->set_param_float(0, cap);
  return t;
}

Tensor* Graph::mul_mat_heads(Tensor* w, Tensor* x) {
  require(
      w->ne[0] == x->ne[0] && w->ne[2] == x->ne[1] && w->ne[3] == 1 && x->ne[3] == 1 && x->type == DType::F32,
      "mul_mat_heads of w [n_in, n_out, H] and x [n_in, H, T]", w, x);
  require_contiguous(w, "mul_mat_heads of a strided weight");
  require_contiguous(x, "mul_mat_heads of a strided view (copy it first)");
  return new_node(Op::kMulMatId, DType::F32, {w->ne[1], x->ne[1], x->ne[2], 1}, {w, x});
}

Tensor* Graph::concat(Tensor* a, Tensor* b) {
  require(a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3] && a->type == b->type,
          "concat of rows of the same count and type", a, b);
  require(a->is_contiguous() && b->is_contiguous(), "concat of a strided view (copy it first)", a, b);
  return new_node(Op::kConcat, a->type, {a->ne[0] + b->ne[0], a->ne[1], a->ne[2], a->ne[3]}, {a, b});
}

Tensor* Graph::sigmoid(Tensor* a) {
  require_contiguous(a, "sigmoid of a strided view (copy it first)");
  return new_node(Op::kSigmoid, DType::F32, a->ne, {a});
}

Tensor* Graph::clamp(Tensor* a, float lo, float hi) {
  require_contiguous(a, "clamp of a strided view (copy it first)");
  require(lo <= hi, "clamp needs lo <= hi", a);
  Tensor* t = new_node(Op::kClamp, DType::F32, a->ne, {a});
  t->set_param_float(0, lo);
  t->set_param_float(1, hi);
  return t;
}

Tensor* Graph::exp(Tensor* a) {
  require_contiguous(a, "exp of a strided view (copy it first)");
  return new_node(Op::kExp, DType::F32, a->ne, {a});
}

Tensor* Graph::softplus(Tensor* a) {
  require_contiguous(a, "softplus of a strided view (copy it first)");
  return new_node(Op::kSoftplus, DType::F32, a->ne, {a});
}

Tensor* Graph::tanh(Tensor* a) {
  require_contiguous(a, "tanh of a strided view (copy it first)");
  return new_node(Op::kTanh, DType::F32, a->ne, {a});
}

Tensor* Graph::div(Tensor* a, Tensor* b) {
  require(broadcasts(a, b) || broadcasts_per_row(a, b), "div shapes", a, b);
  require(a->is_contiguous() && b->is_contiguous(), "div of a strided view (copy it first)", a, b);
  return new_node(Op::kDiv, DType::F32, a->ne, {a, b});
}

Tensor* Graph::sum_rows(Tensor* a) {
  require_contiguous(a, "sum_rows of a strided view (copy it first)");
  return new_node(Op::kSumRows, DType::F32, {1, a->ne[1], a->ne[2], a->ne[3]}, {a});
}

Tensor* Graph::top_k(Tensor* a, int32_t k) {
  require_contiguous(a, "top_k of a strided view (copy it first)");
  require(k > 0 && k <= a->ne[0], "top_k needs 0 < k <= the row length", a);
  Tensor* t = new_node(Op::kTopK, DType::I32, {k, a->ne[1], a->ne[2], a->ne[3]}, {a});
  t->params[0] = k;
  return t;
}

Tensor* Graph::top_k_grouped(Tensor* a, int32_t k, int32_t groups, int32_t groups_used) {
  require(groups > 1 && a->ne[0] % groups == 0 && a->ne[0] / groups >= 2,
          "top_k_grouped needs groups of at least two values that divide the row", a);
  require(groups_used > 0 && groups_used <= groups && k <= int64_t{groups_used} * (a->ne[0] / groups),
          "top_k_grouped needs 0 < groups_used <= groups and k within the used groups", a);
  Tensor* t = top_k(a, k);
  t->params[1] = groups;
  t->params[2] = groups_used;
  return t;
}

Tensor* Graph::weighted_sum(Tensor* a, Tensor* w) {
  require(w->ne[0] == a->ne[1] && w->ne[1] == a->ne[2] && w->ne[2] == 1 && a->ne[3] == 1 && w->ne[3] == 1 &&
              w->type == DType::F32,
          "weighted_sum of a [n, k, t] by w [k, t]", a, w);
  require(a->is_contiguous() && w->is_contiguous(), "weighted_sum of a strided view (copy it first)", a, w);
  return new_node(Op::kWeightedSum, DType::F32, {a->ne[0], a->ne[2], 1, 1}, {a, w});
}

Tensor* Graph::swiglu(Tensor* gate, Tensor* up) {
  require(same_shape(gate, up), "swiglu shapes", gate, up);
  require(gate->is_contiguous() && up->is_contiguous(), "swiglu of a strided view (copy it first)", gate, up);
  return new_node(Op::kSwiGlu, DType::F32, gate->ne, {gate, up});
}

Tensor* Graph::geglu(Tensor* gate, Tensor* up) {
  require(same_shape(gate, up), "geglu shapes", gate, up);
  require(gate->is_contiguous() && up->is_contiguous(), "geglu of a strided view (copy it first)", gate, up);
  return new_node(Op::kGeGlu, DType::F32, gate->ne, {gate, up});
}

Tensor* Graph::swiglu_oai(Tensor* gate, Tensor* up, float alpha, float limit) {
  require(same_shape(gate, up), "swiglu_oai shapes", gate, up);
  require(gate->is_contiguous() && up->is_contiguous(), "swiglu_oai of a strided view (copy it first)", gate,
          up);
  Tensor* t = new_node(Op::kSwiGluOai, DType::F32, gate->ne, {gate, up});
  t->set_param_float(0, alpha);
  t->set_param_float(1, limit);
  return t;
}

Tensor* Graph::rope(Tensor* x, Tensor* positions, const RopeParams& params, Tensor* freq_factors) {
  require(positions->type == DType::I32 && positions->ne[0] == x->ne[2], "rope positions", x, positions);
  require(params.n_rot > 0 && params.n_rot <= x->ne[0] && params.n_rot % 2 == 0, "rope n_rot", x);
  require(x->ne[3] == 1, "rope of a 4-D tensor (heads and tokens only)", x);
  Tensor* t = new_node(Op::kRope, DType::F32, x->ne, {x, positions, freq_factors});
  store_rope_params(t, params);
  t->params[kRopeHeadDim] = static_cast<int32_t>(x->ne[0]);
  return t;
}

Tensor* Graph::store_rows(Tensor* cache, Tensor* rows, Tensor* slots) {
  require(cache->ne[0] * cache->ne[2] * slots->ne[0] == rows->elements() && slots->type == DType::I32,
          "store_rows shapes", cache, rows);
  require_contiguous(rows, "store_rows of a strided view (copy it first)");
  Tensor* t = new_node(Op::kStoreRows, cache->type, cache->ne, {cache, rows, slots});
  t->nb = cache->nb;
  t->view_source = cache;  // aliases the cache: nothing to allocate
  return t;
}

namespace {

// The checks both WKV ops share: `per_token` F32 [N, H, T] (the first fixes N, H, T), the state
// F32 [N, N, H, S] and the slots I32 [T], all contiguous.
void require_wkv_operands(const char* op, std::initializer_list<const Tensor*> per_token, const Tensor* state,
                          const Tensor* slots) {
  const auto check = [op](bool ok, const char* what, const Tensor* a, const Tensor* b) {
    if (!ok) require(false, (std::string(op) + ": " + what).c_str(), a, b);
  };
  const Tensor* first = *per_token.begin();
  check(first->ne[0] > 0 && first->ne[1] > 0 && first->ne[3] == 1, "inputs F32 [N, H, T]", first, nullptr);
  for (const Tensor* t : per_token) {
    check(t->type == DType::F32 && same_shape(t, first) && t->is_contiguous(),
          "inputs F32 [N, H, T], contiguous and of one shape", first, t);
  }
  check(state->type == DType::F32 && state->ne[0] == first->ne[0] && state->ne[1] == first->ne[0] &&
            state->ne[2] == first->ne[1] && state->ne[3] > 0 && state->is_contiguous(),
        "state F32 [N, N, H, S], contiguous", first, state);
  check(is_slots(slots, first->ne[2]), "slots I32 [T] or [T, 2]", first, slots);
}

}  // namespace

Tensor* Graph::rwkv_wkv6(Tensor* k, Tensor* v, Tensor* r, Tensor* u, Tensor* w, Tensor* state,
                         Tensor* slots) {
  require_wkv_operands("rwkv_wkv6", {k, v, r, w}, state, slots);
  require(u->type == DType::F32 && u->ne[0] == k->ne[0] && u->ne[1] == k->ne[1] && u->ne[2] == 1 &&
              u->ne[3] == 1 && u->is_contiguous(),
          "rwkv_wkv6: time_first u F32 [N, H]", k, u);
  return new_node(Op::kRwkvWkv6, DType::F32, {k->ne[0] * k->ne[1], k->ne[2], 1, 1},
                  {k, v, r, u, w, state, slots});
}

Tensor* Graph::rwkv_wkv7(Tensor* r, Tensor* w, Tensor* k, Tensor* v, Tensor* a, Tensor* b, Tensor* state,
                         Tensor* slots) {
  require_wkv_operands("rwkv_wkv7", {r, w, k, v, a, b}, state, slots);
  return new_node(Op::kRwkvWkv7, DType::F32, {r->ne[0] * r->ne[1], r->ne[2], 1, 1},
                  {r, w, k, v, a, b, state, slots});
}

Tensor* Graph::gated_delta_net(Tensor* q, Tensor* k, Tensor* v, Tensor* g, Tensor* beta, Tensor* state,
                               Tensor* slots, const DeltaNetParams& params) {
  require(tokens_packed(q, 2) && q->ne[0] > 0 && q->ne[1] > 0,
          "gated_delta_net q F32 [d_k, H_k, T], each token's values contiguous", q);
  require(tokens_packed(k, 2) && k->ne == q->ne, "gated_delta_net k F32 of q's shape", k, q);
  const int64_t d_k = q->ne[0], n_head_k = q->ne[1], n_tokens = q->ne[2];
  require(tokens_packed(v, 2) && v->ne[0] > 0 && v->ne[2] == n_tokens && v->ne[1] % n_head_k == 0,
          "gated_delta_net v F32 [d_v, H, T] with H a multiple of q's heads", v, q);
  const int64_t d_v = v->ne[0], n_head = v->ne[1];
  // g: a scalar per head and token [H, T], or (Kimi's KDA) one per key index [d_k, H, T].
  const bool per_key_gate = g->ne[0] == d_k && g->ne[1] == n_head && g->ne[2] == n_tokens && g->ne[3] == 1 &&
                            !(g->ne[0] == n_head && g->ne[1] == n_tokens && g->ne[2] == 1);
  require(per_key_gate ? tokens_packed(g, 2) && d_k <= kMaxDeltaNetKeyGate
                       : tokens_packed(g, 1) && g->ne[0] == n_head && g->ne[1] == n_tokens,
          "gated_delta_net g F32 [H, T] or [d_k <= 512, H, T]", g, v);
  require(tokens_packed(beta, 1) && beta->ne[0] == n_head && beta->ne[1] == n_tokens,
          "gated_delta_net beta F32 [H, T]", beta, v);
  require(is_state(state, {d_v, d_k, n_head, state->ne[3]}),
          "gated_delta_net state F32 [d_v, d_k, H, S], contiguous", state, v);
  require_slots(slots, n_tokens, "gated_delta_net slots I32 [T or [T, 2]", v);
  require(std::isfinite(params.scale), "gated_delta_net scale must be finite", q);
  Tensor* t = new_node(Op::kGatedDeltaNet, DType::F32, {d_v * n_head, n_tokens, 1, 1},
                       {q, k, v, g, beta, state, slots});
  t->set_param_float(0, params.scale);
  t->params[1] = params.grouped_heads ? 1 : 0;
  t->params[2] = per_key_gate ? 1 : 0;
  return t;
}

float alibi_slope(int64_t h, int64_t n_head, float max_bias) {
  const auto n = static_cast<int64_t>(1)
                 << static_cast<int>(std::floor(std::log2(static_cast<double>(n_head))));
  const float m0 = std::pow(2.0f, -max_bias / static_cast<float>(n));
  const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / static_cast<float>(n));
  return h < n ? std::pow(m0, static_cast<float>(h + 1)) : std::pow(m1, static_cast<float>(2 * (h - n) + 1));
}

Tensor* Graph::attention(Tensor* q, Tensor* k, Tensor* v, Tensor* index, const AttentionParams& params,
                         Tensor* sinks, Tensor* alibi_positions) {
  const int64_t head_dim = q->ne[0];
  require(head_dim > 0 && k->ne[0] % head_dim == 0, "attention head size", q, k);
  require(k->ne[1] == v->ne[1] && k->ne[2] == v->ne[2], "attention cache sizes", k, v);
  const AttentionCacheHeads heads = attention_cache_heads(*k, *v, head_dim);
  require(q->ne[1] % heads.n_head_kv == 0, "attention heads", q, k);
  require(index->type == DType::I32 && index->rows() == 1 &&
              attention_index_capacity(q->ne[2], index->ne[0]) >= 0,
          "attention index", q, index);
  if (sinks != nullptr) {
    require(sinks->type == DType::F32 && sinks->elements() == q->ne[1] && sinks->is_contiguous(),
            "attention sinks F32 [n_head]", q, sinks);
  }
  require(params.max_alibi_bias >= 0.0f && (params.max_alibi_bias > 0.0f) == (alibi_positions != nullptr),
          "attention ALiBi positions (given exactly when max_alibi_bias > 0)", q, index);
  if (alibi_positions != nullptr) {
    const int64_t capacity = attention_index_capacity(q->ne[2], index->ne[0]);
    require(alibi_positions->type == DType::I32 && alibi_positions->is_contiguous() &&
                alibi_positions->elements() == alibi_positions_elements(q->ne[2], capacity),
            "attention ALiBi positions I32 [n_tokens + capacity]", q, alibi_positions);
  }
  Tensor* t = new_node(Op::kAttention, DType::F32, {heads.head_dim_v * q->ne[1], q->ne[2], 1, 1},
                       {q, k, v, index, sinks, alibi_positions});
  t->set_param_float(0, params.scale);
  t->set_param_float(1, params.softcap);
  t->set_param_float(2, params.max_alibi_bias);
  return t;
}

Tensor* Graph::rope_shift(Tensor* cache, Tensor* deltas, int32_t head_dim, const RopeParams& params,
                          Tensor* freq_factors) {
  require(deltas->type == DType::I32 && deltas->ne[0] == cache->ne[1], "rope_shift deltas", cache, deltas);
  require(head_dim > 0 && cache->ne[0] % head_dim == 0 && params.n_rot > 0 && params.n_rot <= head_dim &&
              params.n_rot % 2 == 0,
          "rope_shift head size and n_rot", cache);
  Tensor* t = new_node(Op::kRopeShift, cache->type, cache->ne, {cache, deltas, freq_factors});
  t->nb = cache->nb;
  t->view_source = cache;
  store_rope_params(t, params);
  t->params[kRopeHeadDim] = head_dim;
  return t;
}

Tensor* Graph::softmax(Tensor* a, float scale, Tensor* mask) {
  if (mask != nullptr) {
    require(broadcasts(a, mask) && mask->type == DType::F32 && mask->is_contiguous(), "softmax mask", a,
            mask);
  }
  require_contiguous(a, "softmax of a strided view (copy it first)");
  Tensor* t = new_node(Op::kSoftmax, DType::F32, a->ne, {a, mask});
  t->set_param_float(0, scale);
  return t;
}

Tensor* Graph::copy(Tensor* a, DType type) { return new_node(Op::kCopy, type, a->ne, {a}); }

Tensor* Graph::l2_norm(Tensor* x, float eps) {
  require(x->nb[0] == dtype_traits(x->type).block_bytes && dtype_traits(x->type).block_size == 1,
          "l2_norm of rows whose values are not contiguous (copy it first)", x);
  require(eps >= 0.0f, "l2_norm needs eps >= 0", x);
  Tensor* t = new_node(Op::kL2Norm, DType::F32, x->ne, {x});
  t->set_param_float(0, eps);
  return t;
}

Tensor* Graph::ssm_conv(Tensor* x, Tensor* weight, Tensor* state, Tensor* slots) {
  require(tokens_packed(x, 1), "ssm_conv x F32 [d, T], each token's values contiguous", x);
  const int64_t d = x->ne[0], n_tokens = x->ne[1], k = weight->ne[0];
  require(weight->type == DType::F32 && weight->is_contiguous() && k >= 2 && weight->ne[1] == d &&
              weight->rows() == d,
          "ssm_conv weight F32 [k >= 2, d]", weight, x);
  require(is_state(state, {k - 1, d, state->ne[2], 1}), "ssm_conv state F32 [k - 1, d, S], contiguous", state,
          weight);
  require_slots(slots, n_tokens, "ssm_conv slots I32 [T or [T, 2]", x);
  return new_node(Op::kSsmConv, DType::F32, {d, n_tokens, 1, 1}, {x, weight, state, slots});
}

Tensor* Graph::ssm_scan(Tensor* x, Tensor* dt, Tensor* A, Tensor* B, Tensor* C, Tensor* state,
                        Tensor* slots) {
  require(tokens_packed(x, 2), "ssm_scan x F32 [head_dim, H, T], each token's values contiguous", x);
  const int64_t head_dim = x->ne[0], n_head = x->ne[1], n_tokens = x->ne[2];
  const int64_t d_state = B->ne[0], n_group = B->ne[1];
  require(tokens_packed(dt, 1) && dt->ne[0] == n_head && dt->ne[1] == n_tokens, "ssm_scan dt F32 [H, T]", dt,
          x);
  require(tokens_packed(B, 2) && B->ne[2] == n_tokens && n_group > 0 && n_head % n_group == 0,
          "ssm_scan B F32 [d_state, G, T] with G dividing H", B, x);
  require(tokens_packed(C, 2) && C->ne == B->ne, "ssm_scan C F32 of B's shape", C, B);
  require(A->type == DType::F32 && A->is_contiguous() && (A->ne[0] == d_state || A->ne[0] == 1) &&
              A->ne[1] == n_head && A->ne[2] == 1 && A->ne[3] == 1,
          "ssm_scan A F32 [d_state or 1, H]", A, x);
  require(is_state(state, {d_state, head_dim, n_head, state->ne[3]}),
          "ssm_scan state F32 [d_state, head_dim, H, S], contiguous", state, x);
  require_slots(slots, n_tokens, "ssm_scan slots I32 [T or [T, 2]", x);
  return new_node(Op::kSsmScan, DType::F32, {head_dim, n_head, n_tokens, 1}, {x, dt, A, B, C, state, slots});
}

Tensor* Graph::token_shift(Tensor* x, Tensor* state, Tensor* slots) {
  require(tokens_packed(x, 1), "token_shift x F32 [d, T], each token's values contiguous", x);
  require(is_state(state, {x->ne[0], state->ne[1], 1, 1}), "token_shift state F32 [d, S], contiguous", state,
          x);
  require_slots(slots, x->ne[1], "token_shift slots I32 [T or [T, 2]", x);
  return new_node(Op::kTokenShift, DType::F32, {x->ne[0], x->ne[1], 1, 1}, {x, state, slots});
}

Tensor* Graph::reshape(Tensor* a, std::array<int64_t, kMaxDims> ne) {
  require(a->is_contiguous(), "reshape of a non-contiguous tensor", a);
  Tensor* t = new_node(Op::kView, a->type, ne, {a});
  require(t->elements() == a->elements(), "reshape changes the element count", a, t);
  t->view_source = a;
  return t;
}

Tensor* Graph::view(Tensor* a, std::array<int64_t, kMaxDims> ne, std::array<size_t, kMaxDims> nb,
                    size_t offset) {
  Tensor* t = new_node(Op::kView, a->type, ne, {a});
  t->nb = nb;
  t->view_source = a;
  t->view_offset = offset;
  return t;
}

Tensor* Graph::permute(Tensor* a, std::array<int, kMaxDims> axes) {
  std::array<bool, kMaxDims> seen{};
  for (int axis : axes) {
    require(axis >= 0 && axis < kMaxDims && !seen[static_cast<size_t>(axis)], "permute axes", a);
    seen[static_cast<size_t>(axis)] = true;
  }
  require(dtype_traits(a->type).block_size == 1, "permute of a block-quantized tensor", a);
  std::array<int64_t, kMaxDims> ne{};
  std::array<size_t, kMaxDims> nb{};
  for (int i = 0; i < kMaxDims; ++i) {
    ne[static_cast<size_t>(i)] = a->ne[static_cast<size_t>(axes[static_cast<size_t>(i)])];
    nb[static_cast<size_t>(i)] = a->nb[static_cast<size_t>(axes[static_cast<size_t>(i)])];
  }
  return view(a, ne, nb, 0);
}

void Graph::mark_output(Tensor* t) {
  t->is_output = true;
  outputs_.push_back(t);
}

void Graph::finalize() {
  // Nodes were created in dependency order; keep those the outputs reach.
  std::vector<char> needed(all_.size(), 0);
  for (Tensor* t : all_) t->index = -1;
  for (size_t i = 0; i < all_.size(); ++i) all_[i]->index = static_cast<int32_t>(i);
  for (Tensor* t : outputs_) needed[t->index] = 1;
  for (size_t i = all_.size(); i-- > 0;) {
    if (!needed[i]) continue;
    for (Tensor* s : all_[i]->src) {
      if (s != nullptr && s->index >= 0) needed[s->index] = 1;
    }
  }
  order_.clear();
  for (size_t i = 0; i < all_.size(); ++i) {
    if (needed[i]) order_.push_back(all_[i]);
  }
  for (size_t i = 0; i < order_.size(); ++i) order_[i]->index = static_cast<int32_t>(i);
}

Tensor* Graph::find(const std::string& name) const {
  // Before finalize() every node built so far; after it, those the outputs kept.
  for (Tensor* t : order_.empty() ? all_ : order_) {
    if (t->name == name) return t;
  }
  return nullptr;
}

}  // namespace sinter
