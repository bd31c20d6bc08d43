// The case table (op_cases.h), part three: the ops of mixture-of-experts layers: expert products
// (mul_mat_id) on weights of every type, with experts that get no token, one, and many; top-k;
// per-batch row lookups (the chosen experts' weights); weighted sums of expert outputs.
#include "backend/op_cases.h"
#include "backend/op_test_support.h"

namespace sinter::testing {
namespace {

// Token t's k distinct experts among the first n_expert − 1 (the last expert is never chosen):
// expert 0 is chosen by every even token (many tokens), expert 1 also by odd tokens' second
// slot, and the others by few.
std::vector<int32_t> expert_ids(int64_t n_expert, int64_t k, int64_t tokens) {
  std::vector<int32_t> ids;
  const int64_t pool = n_expert - 1;
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t base = t % 2 == 0 ? 0 : (t * t) % pool;
    for (int64_t j = 0; j < k; ++j) ids.push_back(static_cast<int32_t>((base + j) % pool));
  }
  return ids;
}

// {n_in, n_out, n_expert, k, tokens, x per slot (1) or per token (0)}: n_in plain-only (33),
// 32·3 and 256·3; n_out within one 16-row group and across several; one token (generation) and
// batches whose experts get 0, 1 and many tokens.
const std::vector<Dims> kExpertShapes = {{33, 7, 3, 2, 3, 1},    {96, 33, 5, 2, 7, 0},
                                         {96, 7, 4, 3, 1, 1},    {96, 17, 9, 4, 12, 0},
                                         {768, 33, 6, 2, 17, 0}, {768, 17, 9, 4, 5, 1}};

// {n, rows, k}: the top k of rows of n values.
const std::vector<Dims> kTopKShapes = {{1, 3, 1}, {8, 5, 2}, {64, 7, 8}, {129, 4, 6}, {256, 2, 8}};

}  // namespace

std::vector<OpCase> mixture_of_experts_cases() {
  std::vector<OpCase> cases;
  cases.push_back(
      {"mul_mat_id", Op::kMulMatId, every_type(), kExpertShapes, kFloatFunctions,
       [](CaseInputs& in, DType type, const Dims& d) {
         const int64_t n_in = d[0], n_out = d[1], n_expert = d[2], k = d[3], tokens = d[4];
         Tensor* w = in.experts(type, n_in, n_out, n_expert);
         Tensor* x = in.random("x", DType::F32, {n_in, d[5] != 0 ? k : 1, tokens, 1});
         Graph& g = in.graph();
         Tensor* ids = g.reshape(in.ints("ids", expert_ids(n_expert, k, tokens)), {k, tokens, 1, 1});
         return g.mul_mat_id(w, x, ids);
       }});
  // The chosen columns' values (equal values would make the columns ambiguous; random floats
  // have none), looked up per row as the router looks up the chosen experts' probabilities.
  cases.push_back({"top_k", Op::kTopK, float_inputs(), kTopKShapes, kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Graph& g = in.graph();
                     Tensor* x = in.random("x", type, {d[0], d[1], 1, 1}, 4.0f);
                     Tensor* ids = g.top_k(x, static_cast<int32_t>(d[2]));
                     return g.get_rows(g.reshape(x, {1, d[0], d[1], 1}), ids);
                   }});
  // Grouped selection: {n, rows, k, groups, groups_used}: groups of 2 and of 8, a k that needs
  // every used group, one group used.
  cases.push_back({"top_k_grouped",
                   Op::kTopK,
                   float_inputs(),
                   {{16, 5, 4, 8, 3}, {64, 3, 6, 8, 2}, {12, 4, 4, 3, 1}},
                   kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Graph& g = in.graph();
                     Tensor* x = in.random("x", type, {d[0], d[1], 1, 1}, 4.0f);
                     Tensor* ids = g.top_k_grouped(x, static_cast<int32_t>(d[2]), static_cast<int32_t>(d[3]),
                                                   static_cast<int32_t>(d[4]));
                     return g.get_rows(g.reshape(x, {1, d[0], d[1], 1}), ids);
                   }});
  // get_rows per batch: table [n, rows, B] by ids [k, B] (an F32 intermediate, as the router's).
  cases.push_back({"get_rows_batched",
                   Op::kGetRows,
                   float_inputs(),
                   {{1, 8, 3, 2}, {5, 7, 4, 3}, {33, 3, 1, 2}},
                   kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Graph& g = in.graph();
                     const int64_t n = d[0], rows = d[1], batches = d[2], k = d[3];
                     Tensor* table = in.random("table", type, {n, rows, batches, 1});
                     std::vector<int32_t> ids;
                     for (int64_t b = 0; b < batches; ++b) {
                       for (int64_t j = 0; j < k; ++j)
                         ids.push_back(static_cast<int32_t>((b * 3 + j * 5) % rows));
                     }
                     return g.get_rows(table, g.reshape(in.ints("ids", ids), {k, batches, 1, 1}));
                   }});
  // {n, k, tokens}: each token's k expert outputs weighted and summed.
  cases.push_back({"weighted_sum",
                   Op::kWeightedSum,
                   float_inputs(),
                   {{1, 1, 1}, {7, 2, 3}, {100, 8, 5}, {33, 3, 17}},
                   kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Tensor* a = in.random("a", type, {d[0], d[1], d[2], 1}, 3.0f);
                     Tensor* w = in.random("w", DType::F32, {d[1], d[2], 1, 1}, 1.0f);
                     return in.graph().weighted_sum(a, w);
                   }});
  // Per-head matrices (DeepSeek's absorbed MLA projections): mul_mat_id without ids, {n_in,
  // n_out, heads, tokens}.
  cases.push_back({"mul_mat_heads",
                   Op::kMulMatId,
                   every_type(),
                   {{96, 33, 4, 3}, {33, 7, 2, 5}, {768, 17, 3, 2}},
                   kFloatFunctions,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Tensor* w = in.experts(type, d[0], d[1], d[2]);
                     return in.graph().mul_mat_heads(w, in.random("x", DType::F32, {d[0], d[2], d[3], 1}));
                   }});
  // {na, nb, rows, planes}: rows of a then b.
  cases.push_back({"concat",
                   Op::kConcat,
                   float_inputs(),
                   {{1, 1, 1, 1}, {7, 33, 3, 2}, {64, 512, 5, 1}},
                   kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Tensor* a = in.random("a", type, {d[0], d[2], d[3], 1});
                     Tensor* b = in.random("b", type, {d[1], d[2], d[3], 1});
                     return in.graph().concat(a, b);
                   }});
  return cases;
}

}  // namespace sinter::testing
