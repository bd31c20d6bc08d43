// The case table (op_cases.h), part four: RWKV's WKV recurrences over a persistent state of several
// slots, with the batch's tokens of different slots interleaved (and a slot that no token uses).
// A case's values are the output y followed by every slot's final state, read after the op.
#include "backend/op_cases.h"
#include "backend/op_test_support.h"
#include "backend/rwkv_test_inputs.h"

namespace sinter::testing {
namespace {

// {N (head size), H, T, S (slots)}: heads of 64 (a 1.5 B RWKV-7's), of 128, one odd size and
// sizes around the vector widths (1, 2, 17, 33, 80: masked tails, blocks of vectors and a block
// of one); one token (generation) and prompts of a few slots.
const std::vector<Dims> kWkvShapes = {{64, 2, 7, 3}, {64, 4, 1, 2},  {2, 1, 3, 1},  {33, 3, 11, 4},
                                      {17, 2, 9, 2}, {128, 1, 5, 2}, {80, 1, 6, 3}, {1, 2, 4, 2}};

OpCase wkv_case(const char* name, bool v7) {
  return {name,
          v7 ? Op::kRwkvWkv7 : Op::kRwkvWkv6,
          {DType::F32},
          kWkvShapes,
          kExactOps,
          [v7](CaseInputs& in, DType /*type*/, const Dims& d) {
            const int64_t n = d[0], heads = d[1], tokens = d[2], slots = d[3];
            const auto seed = static_cast<uint32_t>(n * 1009 + heads * 101 + tokens * 11 + slots);
            const WkvTokens x = wkv_tokens(v7, n, heads, tokens, seed);
            static const char* const kNames6[] = {"k", "v", "r", "w"};
            static const char* const kNames7[] = {"r", "w", "k", "v", "a", "b"};
            std::vector<Tensor*> t;
            for (size_t i = 0; i < x.inputs.size(); ++i)
              t.push_back(in.floats(v7 ? kNames7[i] : kNames6[i], {n, heads, tokens, 1}, x.inputs[i]));
            Tensor* state = in.cache(DType::F32, {n, n, heads, slots}, 0.5f);
            Tensor* slot_ids = in.ints("slots", interleaved_slots(tokens, slots, seed));
            Graph& g = in.graph();
            Tensor* y = v7 ? g.rwkv_wkv7(t[0], t[1], t[2], t[3], t[4], t[5], state, slot_ids)
                           : g.rwkv_wkv6(t[0], t[1], t[2], in.floats("u", {n, heads, 1, 1}, x.u), t[3], state,
                                         slot_ids);
            // The concat reads the state after the op, whose output it also reads.
            return g.concat(g.reshape(y, {y->elements(), 1, 1, 1}),
                            g.reshape(state, {state->elements(), 1, 1, 1}));
          }};
}

}  // namespace

std::vector<OpCase> rwkv_cases() { return {wkv_case("rwkv_wkv6", false), wkv_case("rwkv_wkv7", true)}; }

}  // namespace sinter::testing
