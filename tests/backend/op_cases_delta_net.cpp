// The case table (op_cases.h), part five: the gated delta rule over a persistent state of several
// slots, with the batch's tokens of different slots interleaved (and a slot that no token uses),
// value heads sharing query and key heads both ways (Qwen 3.5's h % H_k, Qwen3-Next's grouping),
// and v, g and beta read in place from wider inputs as the model's fused projections give them.
// A case's values are the output y followed by every slot's final state, read after the op.
#include <algorithm>

#include "backend/delta_net_test_inputs.h"
#include "backend/op_cases.h"
#include "backend/op_test_support.h"

namespace sinter::testing {
namespace {

// {d_k, d_v, H_k, H, T, S}: Qwen 3.5's heads of 128 (two value heads a key head), heads of 64,
// sizes around the vector widths (masked tails, a block of one vector), unequal key and value
// sizes; one token (generation) and prompts of a few slots.
const std::vector<Dims> kShapes = {{128, 128, 1, 2, 5, 3}, {64, 64, 2, 4, 1, 2}, {2, 2, 1, 1, 3, 1},
                                   {33, 33, 3, 3, 9, 4},   {17, 40, 1, 3, 6, 2}, {16, 16, 2, 6, 11, 3}};

// `values` (n per token) as the last n of n + pad values per token of a wider input, seen as
// `shape` (tokens along `token_dim`, each token's n values contiguous): a part of a fused
// projection.
Tensor* in_wider_rows(CaseInputs& in, const char* name, const std::vector<float>& values, int64_t n,
                      int64_t tokens, int64_t pad, std::array<int64_t, kMaxDims> shape, int token_dim) {
  std::vector<float> wide(static_cast<size_t>((n + pad) * tokens), 9.0f);
  for (int64_t t = 0; t < tokens; ++t) {
    std::copy_n(values.begin() + t * n, n, wide.begin() + t * (n + pad) + pad);
  }
  Tensor* t = in.floats(name, {n + pad, tokens, 1, 1}, wide);
  std::array<size_t, kMaxDims> nb{sizeof(float), static_cast<size_t>(shape[0]) * sizeof(float), 0, 0};
  nb[token_dim] = t->nb[1];
  for (int i = token_dim + 1; i < kMaxDims; ++i) nb[i] = nb[i - 1] * static_cast<size_t>(shape[i - 1]);
  return in.graph().view(t, shape, nb, static_cast<size_t>(pad) * sizeof(float));
}

OpCase delta_net_case(const char* name, bool grouped, bool fused) {
  return {name,
          Op::kGatedDeltaNet,
          {DType::F32},
          kShapes,
          kExactOps,
          [grouped, fused](CaseInputs& in, DType /*type*/, const Dims& d) {
            const int64_t d_k = d[0], d_v = d[1], heads_k = d[2], heads = d[3], tokens = d[4], slots = d[5];
            const auto seed =
                static_cast<uint32_t>(d_k * 1009 + d_v * 101 + heads * 11 + tokens + (grouped ? 7 : 0));
            const DeltaNetTokens x = delta_net_tokens(d_k, d_v, heads_k, heads, tokens, seed);
            Tensor* q = in.floats("q", {d_k, heads_k, tokens, 1}, x.q);
            Tensor* k = in.floats("k", {d_k, heads_k, tokens, 1}, x.k);
            Tensor *v, *g, *beta;
            if (fused) {
              v = in_wider_rows(in, "v", x.v, d_v * heads, tokens, 3, {d_v, heads, tokens, 1}, 2);
              g = in_wider_rows(in, "g", x.g, heads, tokens, 1, {heads, tokens, 1, 1}, 1);
              beta = in_wider_rows(in, "beta", x.beta, heads, tokens, 2, {heads, tokens, 1, 1}, 1);
            } else {
              v = in.floats("v", {d_v, heads, tokens, 1}, x.v);
              g = in.floats("g", {heads, tokens, 1, 1}, x.g);
              beta = in.floats("beta", {heads, tokens, 1, 1}, x.beta);
            }
            Tensor* state = in.cache(DType::F32, {d_v, d_k, heads, slots}, 0.5f);
            Tensor* slot_ids = in.ints("slots", interleaved_slots(tokens, slots, seed));
            Graph& graph = in.graph();
            const DeltaNetParams params{1.0f / std::sqrt(static_cast<float>(d_k)), grouped};
            Tensor* y = graph.gated_delta_net(q, k, v, g, beta, state, slot_ids, params);
            // The concat reads the state after the op, whose output it also reads.
            return graph.concat(graph.reshape(y, {y->elements(), 1, 1, 1}),
                                graph.reshape(state, {state->elements(), 1, 1, 1}));
          }};
}

}  // namespace

std::vector<OpCase> delta_net_cases() {
  return {delta_net_case("gated_delta_net", false, false),
          delta_net_case("gated_delta_net_grouped", true, false),
          delta_net_case("gated_delta_net_fused_inputs", false, true)};
}

}  // namespace sinter::testing
