// The case table (op_cases.h), part one: row lookups and matrix products on weights of every
// type, norms, element-wise ops, softmax and copies. op_cases_cache.cpp adds RoPE and the KV
// cache's ops (store_rows, attention, rope_shift).
#include "backend/op_cases.h"

#include <cmath>

#include "backend/op_test_support.h"

namespace sinter::testing {
namespace {

// {n, rows, planes}: one value, row lengths that are no multiple of 8 or 16, row counts that do
// not divide among threads, a long row.
const std::vector<Dims> kRowShapes = {{1, 1, 1}, {7, 3, 1}, {33, 5, 2}, {100, 17, 1}, {1000, 2, 3}};

// x of `type` [n, rows, planes], random in [-scale, scale], through `apply`.
OpCase unary_case(std::string name, Op op, float scale, double max_nmse,
                  std::function<Tensor*(Graph&, Tensor*)> apply) {
  return {std::move(name),
          op,
          float_inputs(),
          kRowShapes,
          max_nmse,
          [scale, apply](CaseInputs& in, DType type, const Dims& d) {
            return apply(in.graph(), in.random("x", type, {d[0], d[1], d[2], 1}, scale));
          }};
}

// a [n, rows, planes] and b of the same shape, or [n, 1, planes] (`b_rows` false) or [n, rows, 1]
// (`b_planes` false): b broadcast over a where it has 1.
OpCase binary_case(std::string name, Op op, bool b_rows, bool b_planes, double max_nmse,
                   std::function<Tensor*(Graph&, Tensor*, Tensor*)> apply) {
  return {std::move(name),
          op,
          float_inputs(),
          kRowShapes,
          max_nmse,
          [b_rows, b_planes, apply](CaseInputs& in, DType type, const Dims& d) {
            Tensor* a = in.random("a", type, {d[0], d[1], d[2], 1}, 3.0f);
            Tensor* b = in.random("b", type, {d[0], b_rows ? d[1] : 1, b_planes ? d[2] : 1, 1}, 3.0f);
            return apply(in.graph(), a, b);
          }};
}

// ids [count] into a table of `rows` rows: the last row first, then a stride that wraps (repeats
// once count exceeds rows).
std::vector<int32_t> row_ids(int64_t count, int64_t rows) {
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < count; ++i) ids.push_back(static_cast<int32_t>((rows - 1 + 5 * i) % rows));
  return ids;
}

// {n, rows, ids}: plain-only (33), Q4_0-family (96 = 32·3) and K-quant (768 = 256·3) rows.
const std::vector<Dims> kGetRowsShapes = {{33, 3, 7}, {96, 17, 7}, {768, 7, 3}, {768, 2, 1}};

// {n_in, n_out, m, planes of X}: m = 1, 3, 17 columns (and 3 × 2 planes); n_out 1, 7, 33 (the
// CPU repacks weights into 16-row groups, and not weights of one row); n_in plain-only (33, 100),
// 32·3 and 256·3.
const std::vector<Dims> kMatMulShapes = {{33, 7, 3, 1},   {100, 33, 1, 1},  {96, 7, 1, 1},
                                         {96, 33, 17, 1}, {96, 1, 3, 1},    {96, 7, 3, 2},
                                         {768, 7, 3, 1},  {768, 33, 17, 1}, {768, 33, 1, 1}};

// A copy's shape {n, rows, planes}: plain-only rows (7, 33), 32·3 and 256·3.
const std::vector<Dims> kCopyShapes = {{7, 3, 2}, {33, 5, 1}, {96, 7, 2}, {768, 3, 1}};

// The copy [n, rows, planes] of a view of a source of `source_type`: the transpose of
// [rows, n, planes] (`transpose`), or [n, planes, rows] with dimensions 1 and 2 swapped.
OpCase copy_case(std::string name, DType source_type, bool transpose) {
  return {std::move(name),
          Op::kCopy,
          every_type(),
          kCopyShapes,
          kExactOps,
          [source_type, transpose](CaseInputs& in, DType type, const Dims& d) {
            Graph& g = in.graph();
            Tensor* view =
                transpose
                    ? g.permute(in.random("src", source_type, {d[1], d[0], d[2], 1}, 2.0f), {1, 0, 2, 3})
                    : g.permute(in.random("src", source_type, {d[0], d[2], d[1], 1}, 2.0f), {0, 2, 1, 3});
            return g.copy(view, type);
          }};
}

// A mask for softmax over [n, rows, planes] rows (mask_rows of them): random values with -inf
// in a scattered pattern, and every column of row 1 masked (its softmax is all zeros).
std::vector<float> softmax_mask(int64_t n, int64_t mask_rows, int64_t planes) {
  std::vector<float> mask = random_values(static_cast<size_t>(n * mask_rows * planes), 77, 3.0f);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t r = 0; r < mask_rows; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        if (r == 1 || (i * 7 + r * 3 + p) % 4 == 0)
          mask[static_cast<size_t>((p * mask_rows + r) * n + i)] = -INFINITY;
      }
    }
  }
  return mask;
}

// softmax(x · 0.7 + mask) with no mask, a mask of x's shape, or one row broadcast over x's.
OpCase softmax_case(std::string name, bool masked, bool broadcast_mask) {
  return {std::move(name),
          Op::kSoftmax,
          float_inputs(),
          kRowShapes,
          kFloatRounding,
          [masked, broadcast_mask](CaseInputs& in, DType type, const Dims& d) {
            Tensor* x = in.random("x", type, {d[0], d[1], d[2], 1}, 4.0f);
            Tensor* mask = nullptr;
            if (masked) {
              const int64_t rows = broadcast_mask ? 1 : d[1], planes = broadcast_mask ? 1 : d[2];
              mask = in.floats("mask", {d[0], rows, planes, 1}, softmax_mask(d[0], rows, planes));
            }
            return in.graph().softmax(x, 0.7f, mask);
          }};
}

}  // namespace

std::vector<DType> every_type() {
  std::vector<DType> types;
  for (const DTypeTraits& t : all_dtypes()) types.push_back(t.type);
  return types;
}

std::vector<DType> float_inputs() { return {DType::F32, DType::F16}; }

std::vector<OpCase> lookup_and_arithmetic_cases() {
  std::vector<OpCase> cases;
  // Weights of every type, made the backend's by load_weight (the CPU repacks some).
  cases.push_back({"get_rows", Op::kGetRows, every_type(), kGetRowsShapes, kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Tensor* table = in.weight(type, d[0], d[1]);
                     return in.graph().get_rows(table, in.ints("ids", row_ids(d[2], d[1])));
                   }});
  // A table in the arena: an F32 intermediate (a sum), or an input of another type.
  cases.push_back({"get_rows_from_arena", Op::kGetRows, every_type(), kGetRowsShapes, kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Graph& g = in.graph();
                     Tensor* table = in.random("table", type, {d[0], d[1], 1, 1});
                     if (type == DType::F32)
                       table = g.add(table, in.random("addend", type, {d[0], d[1], 1, 1}));
                     return g.get_rows(table, in.ints("ids", row_ids(d[2], d[1])));
                   }});
  cases.push_back({"mul_mat", Op::kMatMul, every_type(), kMatMulShapes, kFloatFunctions,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Tensor* w = in.weight(type, d[0], d[1]);
                     Tensor* x = in.random("x", DType::F32, {d[0], d[2], d[3], 1});
                     return in.graph().mul_mat(w, x);
                   }});

  cases.push_back(unary_case("rms_norm", Op::kRmsNorm, 4.0f, kFloatRounding,
                             [](Graph& g, Tensor* x) { return g.rms_norm(x, 1e-5f); }));
  cases.push_back(unary_case("norm", Op::kNorm, 4.0f, kFloatRounding,
                             [](Graph& g, Tensor* x) { return g.norm(x, 1e-5f); }));
  cases.push_back(unary_case("l2_norm", Op::kL2Norm, 4.0f, kFloatRounding,
                             [](Graph& g, Tensor* x) { return g.l2_norm(x, 1e-6f); }));
  // Rows whose norm is below eps: x / eps.
  cases.push_back(unary_case("l2_norm_below_eps", Op::kL2Norm, 1e-4f, kFloatRounding,
                             [](Graph& g, Tensor* x) { return g.l2_norm(x, 1e-2f); }));
  // The rows of a wider input [n + 5, rows, planes], 2 values in (heads of a fused projection).
  cases.push_back({"l2_norm_strided_rows", Op::kL2Norm, float_inputs(), kRowShapes, kFloatRounding,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Tensor* wide = in.random("x", type, {d[0] + 5, d[1], d[2], 1}, 4.0f);
                     return in.graph().l2_norm(
                         in.graph().view(wide, {d[0], d[1], d[2], 1}, wide->nb, 2 * wide->nb[0]), 1e-6f);
                   }});
  cases.push_back(unary_case("scale", Op::kScale, 4.0f, kExactOps,
                             [](Graph& g, Tensor* x) { return g.scale(x, -0.37f); }));
  cases.push_back(
      unary_case("silu", Op::kSilu, 8.0f, kFloatRounding, [](Graph& g, Tensor* x) { return g.silu(x); }));
  cases.push_back(
      unary_case("gelu", Op::kGelu, 8.0f, kFloatFunctions, [](Graph& g, Tensor* x) { return g.gelu(x); }));
  cases.push_back(unary_case("softcap", Op::kSoftcap, 40.0f, kFloatFunctions,
                             [](Graph& g, Tensor* x) { return g.softcap(x, 30.0f); }));
  cases.push_back(unary_case("sigmoid", Op::kSigmoid, 8.0f, kFloatRounding,
                             [](Graph& g, Tensor* x) { return g.sigmoid(x); }));
  cases.push_back(
      unary_case("exp", Op::kExp, 8.0f, kFloatRounding, [](Graph& g, Tensor* x) { return g.exp(x); }));
  // Inputs up to ±24: both sides of softplus's pass-through at 20.
  cases.push_back(unary_case("softplus", Op::kSoftplus, 24.0f, kFloatRounding,
                             [](Graph& g, Tensor* x) { return g.softplus(x); }));
  cases.push_back(
      unary_case("tanh", Op::kTanh, 4.0f, kFloatRounding, [](Graph& g, Tensor* x) { return g.tanh(x); }));
  cases.push_back(unary_case("clamp", Op::kClamp, 4.0f, kExactOps,
                             [](Graph& g, Tensor* x) { return g.clamp(x, -1.5f, 0.25f); }));
  cases.push_back(unary_case("sum_rows", Op::kSumRows, 4.0f, kFloatRounding,
                             [](Graph& g, Tensor* x) { return g.sum_rows(x); }));

  const auto add = [](Graph& g, Tensor* a, Tensor* b) { return g.add(a, b); };
  const auto mul = [](Graph& g, Tensor* a, Tensor* b) { return g.mul(a, b); };
  cases.push_back(binary_case("add", Op::kAdd, true, true, kExactOps, add));
  cases.push_back(binary_case("add_broadcast_row", Op::kAdd, false, false, kExactOps, add));
  cases.push_back(binary_case("add_broadcast_over_planes", Op::kAdd, true, false, kExactOps, add));
  const auto sub = [](Graph& g, Tensor* a, Tensor* b) { return g.sub(a, b); };
  cases.push_back(binary_case("sub", Op::kSub, true, true, kExactOps, sub));
  cases.push_back(binary_case("sub_broadcast_row", Op::kSub, false, false, kExactOps, sub));
  cases.push_back(binary_case("mul", Op::kMul, true, true, kExactOps, mul));
  cases.push_back(binary_case("mul_broadcast_row", Op::kMul, false, false, kExactOps, mul));
  cases.push_back(binary_case("mul_broadcast_over_rows", Op::kMul, false, true, kExactOps, mul));
  // Each row times one value of its own ([1, rows, planes]; RWKV-7's per-head bonus).
  cases.push_back({"mul_per_row", Op::kMul, float_inputs(), kRowShapes, kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     return in.graph().mul(in.random("a", type, {d[0], d[1], d[2], 1}, 3.0f),
                                           in.random("b", type, {1, d[1], d[2], 1}, 3.0f));
                   }});
  cases.push_back(binary_case("div", Op::kDiv, true, true, kExactOps,
                              [](Graph& g, Tensor* a, Tensor* b) { return g.div(a, b); }));
  cases.push_back(binary_case("div_broadcast_row", Op::kDiv, false, false, kExactOps,
                              [](Graph& g, Tensor* a, Tensor* b) { return g.div(a, b); }));
  // Each row divided by one value of its own ([1, rows, planes]), away from 0.
  cases.push_back({"div_per_row", Op::kDiv, float_inputs(), kRowShapes, kExactOps,
                   [](CaseInputs& in, DType type, const Dims& d) {
                     Graph& g = in.graph();
                     Tensor* a = in.random("a", type, {d[0], d[1], d[2], 1}, 3.0f);
                     Tensor* b = g.add(g.clamp(in.random("b", type, {1, d[1], d[2], 1}, 3.0f), 0.0f, 3.0f),
                                       in.floats("one", {1, 1, 1, 1}, {0.5f}));
                     return g.div(a, b);
                   }});
  cases.push_back(binary_case("swiglu", Op::kSwiGlu, true, true, kFloatRounding,
                              [](Graph& g, Tensor* a, Tensor* b) { return g.swiglu(a, b); }));
  cases.push_back(binary_case("geglu", Op::kGeGlu, true, true, kFloatFunctions,
                              [](Graph& g, Tensor* a, Tensor* b) { return g.geglu(a, b); }));
  // Limit 2 inside the inputs' range (±3 here): both clamps are taken.
  cases.push_back(
      binary_case("swiglu_oai", Op::kSwiGluOai, true, true, kFloatFunctions,
                  [](Graph& g, Tensor* a, Tensor* b) { return g.swiglu_oai(a, b, 1.702f, 2.0f); }));

  cases.push_back(softmax_case("softmax", false, false));
  cases.push_back(softmax_case("softmax_masked", true, false));
  cases.push_back(softmax_case("softmax_broadcast_mask", true, true));

  cases.push_back(copy_case("copy_transposed", DType::F32, true));
  cases.push_back(copy_case("copy_transposed_f16", DType::F16, true));
  cases.push_back(copy_case("copy_swapped_planes", DType::F32, false));
  return cases;
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all = lookup_and_arithmetic_cases();
    for (OpCase& c : cache_and_position_cases()) all.push_back(std::move(c));
    for (OpCase& c : mixture_of_experts_cases()) all.push_back(std::move(c));
    for (OpCase& c : recurrent_cases()) all.push_back(std::move(c));
    for (OpCase& c : rwkv_cases()) all.push_back(std::move(c));
    for (OpCase& c : delta_net_cases()) all.push_back(std::move(c));
    return all;
  }();
  return cases;
}

}  // namespace sinter::testing
