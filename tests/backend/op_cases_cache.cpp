// The case table (op_cases.h), part two: RoPE and the KV cache's ops — store_rows, attention
// over the stored cells, rope_shift — on caches in both layouts, [head_dim, cells, heads] (the KV
// cache's) and [head_dim · heads, cells].
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "backend/op_cases.h"
#include "backend/op_test_support.h"

namespace sinter::testing {
namespace {

// How a case sets RopeParams beyond n_rot = head_dim.
struct RopeVariant {
  const char* name;
  bool neox = false;
  bool partial = false;  // n_rot = half the head (rounded down to even)
  float freq_scale = 1.0f;
  bool yarn = false;
  bool factors = false;      // per-pair frequency factors
  float attn_factor = 0.0f;  // 0: 0.9 with YaRN, else 1 (LongRoPE sets its own without YaRN)
};

const RopeVariant kRopeVariants[] = {
    {"rope"},
    {"rope_neox", true},
    {"rope_partial", false, true},
    {"rope_neox_partial", true, true},
    {"rope_linear_scaled_factors", false, false, 0.25f, false, true},
    {"rope_neox_yarn", true, false, 0.25f, true},
    {"rope_yarn_partial_factors", false, true, 0.5f, true, true},
    {"rope_neox_longrope_partial", true, true, 1.0f, false, true, 1.19f},  // Phi-3's LongRoPE
};

RopeParams rope_params(const RopeVariant& v, int64_t head_dim) {
  RopeParams p;
  p.n_rot = static_cast<int32_t>(v.partial ? head_dim / 4 * 2 : head_dim);
  p.neox = v.neox;
  p.freq_scale = v.freq_scale;
  p.n_ctx_orig = v.yarn ? 512 : 4096;
  p.ext_factor = v.yarn ? 1.0f : 0.0f;
  p.attn_factor = v.attn_factor != 0.0f ? v.attn_factor : v.yarn ? 0.9f : 1.0f;
  return p;
}

// The frequency factors input F32 [n_rot / 2] (1 to 4), or nullptr.
Tensor* rope_factors(CaseInputs& in, const RopeVariant& v, const RopeParams& p) {
  if (!v.factors) return nullptr;
  std::vector<float> factors = random_values(static_cast<size_t>(p.n_rot / 2), 31, 1.5f);
  for (float& f : factors) f += 2.5f;
  return in.floats("freq_factors", {p.n_rot / 2, 1, 1, 1}, factors);
}

// {head_dim, n_head, n_tokens}.
const std::vector<Dims> kRopeShapes = {{64, 4, 7}, {18, 3, 1}, {128, 2, 17}};

// Positions 0 and up to 6000 (past a YaRN case's original context).
std::vector<int32_t> positions(int64_t n_tokens) {
  std::vector<int32_t> p;
  for (int64_t t = 0; t < n_tokens; ++t) p.push_back(static_cast<int32_t>((t * 977 + 31 * t * t) % 6000));
  return p;
}

// rope_shift's runs: {cache row length, head_dim, cells, planes}: a head per row in planes (the
// KV cache's layout), several heads per row, both at once.
const std::vector<Dims> kShiftShapes = {{64, 64, 5, 3}, {128, 64, 7, 1}, {54, 18, 4, 1}, {256, 32, 3, 2}};

// Deltas per cell: zero (the cell must stay as it is) every third, else large, of both signs.
std::vector<int32_t> shift_deltas(int64_t cells) {
  std::vector<int32_t> d;
  for (int64_t c = 0; c < cells; ++c) {
    d.push_back(static_cast<int32_t>(c % 3 == 0 ? 0 : (c % 2 != 0 ? -37 * c : 1001 * c)));
  }
  return d;
}

OpCase rope_shift_case(const RopeVariant& variant) {
  return {variant.name,
          Op::kRopeShift,
          every_type(),
          kShiftShapes,
          kFloatRounding,
          [variant](CaseInputs& in, DType type, const Dims& d) {
            const RopeParams p = rope_params(variant, d[1]);
            Tensor* cache = in.cache(type, {d[0], d[2], d[3], 1});
            Tensor* deltas = in.ints("deltas", shift_deltas(d[2]));
            return in.graph().rope_shift(cache, deltas, static_cast<int32_t>(d[1]), p,
                                         rope_factors(in, variant, p));
          }};
}

// store_rows' runs: {row length, planes, cells, n_tokens}; cells ≥ 2·n_tokens − 1.
const std::vector<Dims> kStoreShapes = {
    {7, 1, 6, 3}, {33, 2, 7, 3}, {64, 2, 9, 3}, {96, 1, 5, 2}, {256, 3, 4, 1}};

// Scattered slots: the last cell, then every other one backwards.
std::vector<int32_t> store_slots(int64_t n_tokens, int64_t cells) {
  std::vector<int32_t> slots;
  for (int64_t t = 0; t < n_tokens; ++t) slots.push_back(static_cast<int32_t>(cells - 1 - 2 * t));
  return slots;
}

// attention's runs: {head_dim, n_head, n_head_kv, n_tokens, head_dim_v}: grouped heads (2 and 4
// per KV head), one head per KV head, a head_dim that is no multiple of 32 with a smaller V.
const std::vector<Dims> kAttentionShapes = {
    {64, 4, 2, 7, 64}, {32, 8, 8, 1, 32}, {40, 6, 2, 17, 24}, {128, 4, 1, 5, 128}};

constexpr int64_t kHistory = 5;  // cells written before the batch

// The batch's cells (scattered over the cache) and what each token sees: the history and the
// batch's tokens up to itself, in position order; every fourth token from the third a window of
// the last 3 cells only; every fifth from the fourth none at all.
struct AttentionLayout {
  int64_t cells;
  std::vector<int32_t> slots;
  std::vector<int32_t> index;  // graph.h: begin[t], end[t], then the cells
};

AttentionLayout attention_layout(int64_t n_tokens) {
  AttentionLayout layout;
  layout.cells = kHistory + n_tokens + 2;
  std::vector<int32_t> order(static_cast<size_t>(layout.cells));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  const auto seen = order.begin() + kHistory + n_tokens;  // the visible cells, in position order
  layout.slots.assign(order.begin() + kHistory, seen);
  std::vector<int32_t> begin, end;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const auto last = static_cast<int32_t>(kHistory + t + 1);
    end.push_back(t % 5 == 3 ? 0 : last);
    begin.push_back(t % 5 == 3 ? 0 : t % 4 == 2 ? last - 3 : 0);
  }
  layout.index = begin;
  layout.index.insert(layout.index.end(), end.begin(), end.end());
  layout.index.insert(layout.index.end(), order.begin(), seen);
  return layout;
}

// Attention over caches of `type` after the batch's K and V are stored: a plane per KV head
// (`planes`) or all heads in a cell's row; softcap 0 (off) or on; with or without a sink logit
// per query head (from well below to well above the scores, so that it matters); with or
// without ALiBi (max bias 8 as jina-bert-v2's; positions 3 apart from 7 on, so that distances
// are not the list's offsets).
OpCase attention_case(const char* name, bool planes, float softcap, bool sinks = false, bool alibi = false) {
  return {name,
          Op::kAttention,
          {DType::F32, DType::F16, DType::BF16, DType::Q8_0},
          kAttentionShapes,
          kFloatRounding,
          [planes, softcap, sinks, alibi](CaseInputs& in, DType type, const Dims& d) {
            const int64_t head_dim = d[0], n_head = d[1], n_head_kv = d[2], n_tokens = d[3],
                          head_dim_v = d[4];
            const AttentionLayout layout = attention_layout(n_tokens);
            const auto cache_shape = [&](int64_t dim) -> std::array<int64_t, kMaxDims> {
              return planes ? std::array<int64_t, kMaxDims>{dim, layout.cells, n_head_kv, 1}
                            : std::array<int64_t, kMaxDims>{dim * n_head_kv, layout.cells, 1, 1};
            };
            Graph& g = in.graph();
            Tensor* k_cache = in.cache(type, cache_shape(head_dim), 2.0f);
            Tensor* v_cache = in.cache(type, cache_shape(head_dim_v));
            Tensor* q = in.random("q", DType::F32, {head_dim, n_head, n_tokens, 1}, 3.0f);
            Tensor* k = in.random("k", DType::F32, {head_dim, n_head_kv, n_tokens, 1}, 2.0f);
            Tensor* v = in.random("v", DType::F32, {head_dim_v * n_head_kv, n_tokens, 1, 1});
            Tensor* slots = in.ints("slots", layout.slots);
            Tensor* index = in.ints("index", layout.index);
            AttentionParams params;
            params.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
            params.softcap = softcap;
            Tensor* sink = sinks ? in.random("sinks", DType::F32, {n_head, 1, 1, 1}, 4.0f) : nullptr;
            Tensor* positions = nullptr;
            if (alibi) {
              // Token t holds list entry kHistory + t; entry j is at position 7 + 3j.
              const auto position = [](int64_t entry) { return static_cast<int32_t>(7 + 3 * entry); };
              std::vector<int32_t> values;
              for (int64_t t = 0; t < n_tokens; ++t) values.push_back(position(kHistory + t));
              for (int64_t j = 0; j < kHistory + n_tokens; ++j) values.push_back(position(j));
              positions = in.ints("alibi_positions", values);
              params.max_alibi_bias = 8.0f;
            }
            return g.attention(q, g.store_rows(k_cache, k, slots), g.store_rows(v_cache, v, slots), index,
                               params, sink, positions);
          }};
}

}  // namespace

std::vector<OpCase> cache_and_position_cases() {
  std::vector<OpCase> cases;
  for (const RopeVariant& variant : kRopeVariants) {
    cases.push_back({variant.name, Op::kRope, float_inputs(), kRopeShapes, kFloatRounding,
                     [variant](CaseInputs& in, DType type, const Dims& d) {
                       const RopeParams p = rope_params(variant, d[0]);
                       Tensor* x = in.random("x", type, {d[0], d[1], d[2], 1}, 2.0f);
                       Tensor* pos = in.ints("positions", positions(d[2]));
                       return in.graph().rope(x, pos, p, rope_factors(in, variant, p));
                     }});
  }
  cases.push_back(rope_shift_case({"rope_shift"}));
  cases.push_back(rope_shift_case({"rope_shift_neox_yarn_partial_factors", true, true, 0.5f, true, true}));
  cases.push_back(
      rope_shift_case({"rope_shift_neox_longrope_partial", true, true, 1.0f, false, true, 1.19f}));
  // The cache after the store, all of it (cells not written must keep their values).
  cases.push_back({"store_rows", Op::kStoreRows, every_type(), kStoreShapes, kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Tensor* cache = in.cache(type, {d[0], d[2], d[1], 1});
                     Tensor* rows = in.random("rows", DType::F32, {d[0], d[1], d[3], 1}, 2.0f);
                     return in.graph().store_rows(cache, rows, in.ints("slots", store_slots(d[3], d[2])));
                   }});
  cases.push_back(attention_case("attention_head_planes", true, 0.0f));
  cases.push_back(attention_case("attention_head_planes_softcap", true, 1.5f));
  cases.push_back(attention_case("attention_cell_rows", false, 0.0f));
  cases.push_back(attention_case("attention_cell_rows_softcap", false, 1.5f));
  cases.push_back(attention_case("attention_head_planes_sinks", true, 0.0f, true));
  cases.push_back(attention_case("attention_cell_rows_sinks", false, 0.0f, true));
  cases.push_back(attention_case("attention_head_planes_alibi", true, 0.0f, false, true));
  cases.push_back(attention_case("attention_cell_rows_alibi_softcap", false, 1.5f, false, true));
  return cases;
}

}  // namespace sinter::testing
