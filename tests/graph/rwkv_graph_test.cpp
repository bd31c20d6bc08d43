// The WKV builders (Graph::rwkv_wkv6 / rwkv_wkv7): the output's shape, the sources a backend reads
// (the state among them, not planned), and the shape and type mistakes refused at build time.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>

#include "graph/graph.h"
#include "graph/planner.h"

namespace sinter {
namespace {

constexpr int64_t kN = 8, kHeads = 3, kTokens = 5, kSlots = 64;  // a state larger than everything else

struct Operands {
  Graph graph;
  Tensor* per_token[6];
  Tensor* u;
  Tensor state = make_persistent("state", DType::F32, {kN, kN, kHeads, kSlots}, nullptr);
  Tensor* slots;
  Operands() {
    static const char* const kNames[] = {"x0", "x1", "x2", "x3", "x4", "x5"};
    for (int i = 0; i < 6; ++i) per_token[i] = graph.input(kNames[i], DType::F32, {kN, kHeads, kTokens, 1});
    u = graph.input("u", DType::F32, {kN, kHeads, 1, 1});
    slots = graph.input("slots", DType::I32, {kTokens, 1, 1, 1});
  }
  Tensor* wkv6(Tensor* state_tensor) {
    Tensor** x = per_token;
    return graph.rwkv_wkv6(x[0], x[1], x[2], u, x[3], state_tensor, slots);
  }
  Tensor* wkv7(Tensor* state_tensor) {
    Tensor** x = per_token;
    return graph.rwkv_wkv7(x[0], x[1], x[2], x[3], x[4], x[5], state_tensor, slots);
  }
};

TEST(RwkvGraph, OutputsOneRowOfAllHeadsPerToken) {
  Operands o;
  Tensor* y6 = o.wkv6(&o.state);
  Tensor* y7 = o.wkv7(&o.state);
  for (const Tensor* y : {y6, y7}) {
    EXPECT_EQ(y->type, DType::F32);
    EXPECT_EQ(y->ne, (std::array<int64_t, kMaxDims>{kN * kHeads, kTokens, 1, 1}));
  }
  EXPECT_EQ(y6->op, Op::kRwkvWkv6);
  EXPECT_EQ(y6->src[5], &o.state);
  EXPECT_EQ(y6->src[6], o.slots);
  EXPECT_EQ(y7->op, Op::kRwkvWkv7);
  EXPECT_EQ(y7->src[6], &o.state);
  EXPECT_EQ(y7->src[7], o.slots);
  // The state is the caller's: the plan places the inputs and outputs only.
  o.graph.mark_output(y6);
  o.graph.mark_output(y7);
  o.graph.finalize();
  EXPECT_LT(plan_memory(o.graph).arena_bytes, o.state.bytes());
}

TEST(RwkvGraph, ShapeAndTypeMistakesAreCaughtAtBuildTime) {
  Operands o;
  Graph& g = o.graph;
  Tensor** x = o.per_token;
  // A state of another head size, head count, or type; the key and value dimensions swapped in
  // count (N × 2N); a state with no slot.
  for (std::array<int64_t, kMaxDims> ne : {std::array<int64_t, kMaxDims>{kN, kN, kHeads + 1, kSlots},
                                           {kN + 1, kN + 1, kHeads, kSlots},
                                           {kN, 2 * kN, kHeads, kSlots},
                                           {kN, kN, kHeads, 0}}) {
    Tensor bad = make_persistent("bad_state", DType::F32, ne, nullptr);
    EXPECT_THROW(o.wkv6(&bad), std::logic_error);
    EXPECT_THROW(o.wkv7(&bad), std::logic_error);
  }
  Tensor f16_state = make_persistent("f16_state", DType::F16, {kN, kN, kHeads, kSlots}, nullptr);
  EXPECT_THROW(o.wkv6(&f16_state), std::logic_error);
  // Slots of another count or type.
  Tensor* few_slots = g.input("few_slots", DType::I32, {kTokens - 1, 1, 1, 1});
  Tensor* float_slots = g.input("float_slots", DType::F32, {kTokens, 1, 1, 1});
  EXPECT_THROW(g.rwkv_wkv7(x[0], x[1], x[2], x[3], x[4], x[5], &o.state, few_slots), std::logic_error);
  EXPECT_THROW(g.rwkv_wkv6(x[0], x[1], x[2], o.u, x[3], &o.state, float_slots), std::logic_error);
  // A per-token input of another token count, type, or a strided view.
  Tensor* short_input = g.input("short", DType::F32, {kN, kHeads, kTokens - 1, 1});
  Tensor* f16_input = g.input("f16", DType::F16, {kN, kHeads, kTokens, 1});
  Tensor* strided = g.permute(g.input("t", DType::F32, {kHeads, kN, kTokens, 1}), {1, 0, 2, 3});
  for (Tensor* bad : {short_input, f16_input, strided}) {
    EXPECT_THROW(g.rwkv_wkv6(x[0], bad, x[2], o.u, x[3], &o.state, o.slots), std::logic_error);
    EXPECT_THROW(g.rwkv_wkv7(x[0], x[1], x[2], x[3], x[4], bad, &o.state, o.slots), std::logic_error);
  }
  // time_first per token instead of per head.
  EXPECT_THROW(g.rwkv_wkv6(x[0], x[1], x[2], x[4], x[3], &o.state, o.slots), std::logic_error);
}

}  // namespace
}  // namespace sinter
