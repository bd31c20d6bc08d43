// The case table (op_cases.h), part four: the recurrent layers' ops (ssm_conv, ssm_scan,
// token_shift) over states of several slots whose sequences interleave in the batch, compared by
// their outputs and by the states they leave.
#include <cmath>

#include "backend/op_cases.h"
#include "backend/op_test_support.h"

namespace sinter::testing {
namespace {

// Each token's slot among the first S − 1 of S slots (all of them when S < 3; the last one's
// state must then stay as it was), sequences interleaved irregularly.
std::vector<int32_t> interleaved_slots(int64_t n_tokens, int64_t n_slots) {
  const int64_t used = n_slots < 3 ? n_slots : n_slots - 1;
  std::vector<int32_t> slots;
  for (int64_t t = 0; t < n_tokens; ++t) slots.push_back(static_cast<int32_t>((t * 7 + t * t / 3) % used));
  return slots;
}

// What a case compares: the op's output, or the state it leaves (the output is then computed
// too, as an output of the graph built before the copy of the state).
enum class Compared { kOutput, kState };

Tensor* compared(Graph& g, Tensor* output, Tensor* state, Compared what) {
  if (what == Compared::kOutput) return output;
  g.mark_output(output);
  return g.copy(state);
}

// {d, T, k, S}: one channel, channels that are no multiple of 8 or 16, LFM2's k = 3, Mamba's 4.
const std::vector<Dims> kConvShapes = {
    {1, 1, 2, 1}, {7, 5, 4, 3}, {33, 9, 3, 2}, {100, 17, 4, 4}, {260, 3, 4, 2}};

OpCase conv_case(const char* name, Compared what) {
  return {
      name, Op::kSsmConv, {DType::F32}, kConvShapes, kExactOps, [what](CaseInputs& in, DType, const Dims& d) {
        const int64_t channels = d[0], n_tokens = d[1], k = d[2], n_slots = d[3];
        Tensor* x = in.random("x", DType::F32, {channels, n_tokens, 1, 1}, 2.0f);
        Tensor* weight = in.random("weight", DType::F32, {k, channels, 1, 1});
        Tensor* state = in.cache(DType::F32, {k - 1, channels, n_slots, 1}, 2.0f);
        Tensor* slots = in.ints("slots", interleaved_slots(n_tokens, n_slots));
        return compared(in.graph(), in.graph().ssm_conv(x, weight, state, slots), state, what);
      }};
}

// The scan's runs: {d_state, head_dim, n_head, n_group, T, S}. Mamba-2 shapes (heads of 64
// and 16 values, a head of 3 values so that tiles of rows cross heads, groups of several
// heads) and Mamba-1 shapes (head_dim 1: a row per head), d_state around the vector widths.
const std::vector<Dims> kScanShapes = {{16, 4, 4, 2, 5, 3},  {7, 3, 6, 3, 9, 2},   {128, 64, 2, 1, 3, 2},
                                       {33, 17, 2, 1, 4, 2}, {16, 1, 37, 1, 7, 3}, {5, 1, 20, 4, 6, 3},
                                       {17, 2, 9, 3, 2, 1}};

// dt [H, T] in [−4, 4], one value above 20 (softplus passes it through) and one just below.
std::vector<float> scan_dt(int64_t n_head, int64_t n_tokens) {
  std::vector<float> dt = random_values(static_cast<size_t>(n_head * n_tokens), 41, 4.0f);
  dt[0] = 25.0f;
  if (dt.size() > 2) dt[dt.size() / 2] = 19.5f;
  return dt;
}

// A < 0, as −exp(A_log) in the files: decays in (0, 1).
std::vector<float> scan_a(int64_t count) {
  std::vector<float> a = random_values(static_cast<size_t>(count), 43, 1.0f);
  for (float& v : a) v = -std::exp(v);
  return a;
}

// `per_value` A [d_state, H] (Mamba-1) or [1, H]; `fused` takes x, B and C as views of one
// input [head_dim·H + 2·G·d_state + 5, T] and dt of another [H + 3, T] (Mamba-2's split of the
// convolution's output; tokens then lie further apart than their values).
OpCase scan_case(const char* name, bool per_value, bool fused, Compared what) {
  // Mamba-1's e^x per value is the polynomial on AVX2 / AVX-512 (recurrent_kernels.h).
  return {name,
          Op::kSsmScan,
          {DType::F32},
          kScanShapes,
          per_value ? kFloatRounding : kExactOps,
          [per_value, fused, what](CaseInputs& in, DType, const Dims& d) {
            const int64_t d_state = d[0], head_dim = d[1], n_head = d[2], n_group = d[3], n_tokens = d[4],
                          n_slots = d[5];
            Graph& g = in.graph();
            Tensor *x, *b, *c, *dt;
            if (fused) {
              const int64_t width = head_dim * n_head + 2 * n_group * d_state + 5;
              Tensor* all = in.random("xbc", DType::F32, {width, n_tokens, 1, 1}, 2.0f);
              const size_t token = all->nb[1], f = sizeof(float);
              x = g.view(all, {head_dim, n_head, n_tokens, 1}, {f, head_dim * f, token, token * n_tokens}, 0);
              const size_t b_at = static_cast<size_t>(head_dim * n_head) * f;
              const size_t c_at = b_at + static_cast<size_t>(n_group * d_state) * f;
              const std::array<size_t, kMaxDims> bc_nb{f, d_state * f, token, token * n_tokens};
              b = g.view(all, {d_state, n_group, n_tokens, 1}, bc_nb, b_at);
              c = g.view(all, {d_state, n_group, n_tokens, 1}, bc_nb, c_at);
              std::vector<float> dt_values = scan_dt(n_head + 3, n_tokens);
              Tensor* dt_all = in.floats("dt_all", {n_head + 3, n_tokens, 1, 1}, dt_values);
              dt = g.view(dt_all, {n_head, n_tokens, 1, 1}, {f, dt_all->nb[1], dt_all->nb[2], dt_all->nb[3]},
                          2 * f);
            } else {
              x = in.random("x", DType::F32, {head_dim, n_head, n_tokens, 1}, 2.0f);
              b = in.random("B", DType::F32, {d_state, n_group, n_tokens, 1}, 2.0f);
              c = in.random("C", DType::F32, {d_state, n_group, n_tokens, 1}, 2.0f);
              dt = in.floats("dt", {n_head, n_tokens, 1, 1}, scan_dt(n_head, n_tokens));
            }
            const int64_t a_rows = per_value ? d_state : 1;
            Tensor* a = in.floats("A", {a_rows, n_head, 1, 1}, scan_a(a_rows * n_head));
            Tensor* state = in.cache(DType::F32, {d_state, head_dim, n_head, n_slots}, 2.0f);
            Tensor* slots = in.ints("slots", interleaved_slots(n_tokens, n_slots));
            return compared(g, g.ssm_scan(x, dt, a, b, c, state, slots), state, what);
          }};
}

// {d, T, S}.
const std::vector<Dims> kShiftShapes = {{1, 1, 1}, {7, 5, 3}, {33, 9, 2}, {100, 17, 4}};

OpCase token_shift_case(const char* name, Compared what) {
  return {name,
          Op::kTokenShift,
          {DType::F32},
          kShiftShapes,
          kExactOps,
          [what](CaseInputs& in, DType, const Dims& d) {
            Tensor* x = in.random("x", DType::F32, {d[0], d[1], 1, 1}, 2.0f);
            Tensor* state = in.cache(DType::F32, {d[0], d[2], 1, 1}, 2.0f);
            Tensor* slots = in.ints("slots", interleaved_slots(d[1], d[2]));
            return compared(in.graph(), in.graph().token_shift(x, state, slots), state, what);
          }};
}

}  // namespace

std::vector<OpCase> recurrent_cases() {
  std::vector<OpCase> cases;
  cases.push_back(conv_case("ssm_conv", Compared::kOutput));
  cases.push_back(conv_case("ssm_conv_state", Compared::kState));
  cases.push_back(scan_case("ssm_scan_mamba2", false, false, Compared::kOutput));
  cases.push_back(scan_case("ssm_scan_mamba2_state", false, false, Compared::kState));
  cases.push_back(scan_case("ssm_scan_mamba2_fused_views", false, true, Compared::kOutput));
  cases.push_back(scan_case("ssm_scan_mamba1", true, false, Compared::kOutput));
  cases.push_back(scan_case("ssm_scan_mamba1_state", true, false, Compared::kState));
  cases.push_back(scan_case("ssm_scan_mamba1_fused_views_state", true, true, Compared::kState));
  cases.push_back(token_shift_case("token_shift", Compared::kOutput));
  cases.push_back(token_shift_case("token_shift_state", Compared::kState));
  return cases;
}

}  // namespace sinter::testing
