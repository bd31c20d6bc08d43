// The case table (op_cases.h), part four: the recurrent layers' ops (ssm_conv, token_shift) over states of
// several slots whose sequences interleave in the batch, compared by their outputs and by the states they
// leave.
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
  cases.push_back(token_shift_case("token_shift", Compared::kOutput));
  cases.push_back(token_shift_case("token_shift_state", Compared::kState));
  return cases;
}

}  // namespace sinter::testing
