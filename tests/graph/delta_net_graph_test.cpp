// The gated delta rule's builder (Graph::gated_delta_net): the output's shape and parameters, views
// of a fused projection read in place, and the shape and type mistakes refused at build time.
#include <gtest/gtest.h>

#include <stdexcept>

#include "graph/graph.h"

namespace sinter {
namespace {

constexpr int64_t kDk = 8, kDv = 6, kHeadsK = 2, kHeads = 4, kTokens = 5, kSlots = 3;

struct Operands {
  Graph graph;
  Tensor* q = graph.input("q", DType::F32, {kDk, kHeadsK, kTokens, 1});
  Tensor* k = graph.input("k", DType::F32, {kDk, kHeadsK, kTokens, 1});
  Tensor* v = graph.input("v", DType::F32, {kDv, kHeads, kTokens, 1});
  Tensor* g = graph.input("g", DType::F32, {kHeads, kTokens, 1, 1});
  Tensor* beta = graph.input("beta", DType::F32, {kHeads, kTokens, 1, 1});
  Tensor state = make_persistent("state", DType::F32, {kDv, kDk, kHeads, kSlots}, nullptr);
  Tensor* slots = graph.input("slots", DType::I32, {kTokens, 1, 1, 1});
  Tensor* build(const DeltaNetParams& params = {0.25f, false}) {
    return graph.gated_delta_net(q, k, v, g, beta, &state, slots, params);
  }
};

TEST(DeltaNetGraph, OutputsOneRowOfAllValueHeadsPerToken) {
  Operands o;
  Tensor* y = o.build({0.25f, true});
  EXPECT_EQ(y->op, Op::kGatedDeltaNet);
  EXPECT_EQ(y->ne, (std::array<int64_t, kMaxDims>{kDv * kHeads, kTokens, 1, 1}));
  EXPECT_EQ(y->param_float(0), 0.25f);
  EXPECT_EQ(y->params[1], 1);
  EXPECT_EQ(y->src[5], &o.state);
  EXPECT_EQ(y->src[6], o.slots);
  EXPECT_STREQ(op_name(Op::kGatedDeltaNet), "gated_delta_net");
}

// v, g and beta as parts of wider per-token rows (a fused projection's), each token's values
// contiguous: accepted as they lie.
TEST(DeltaNetGraph, ReadsPartsOfWiderRowsInPlace) {
  Operands o;
  Tensor* wide = o.graph.input("wide", DType::F32, {kDv * kHeads + 7, kTokens, 1, 1});
  o.v = o.graph.view(wide, {kDv, kHeads, kTokens, 1}, {4, 4 * kDv, wide->nb[1], wide->nb[1] * kTokens}, 12);
  o.g = o.graph.view(wide, {kHeads, kTokens, 1, 1},
                     {4, wide->nb[1], wide->nb[1] * kTokens, wide->nb[1] * kTokens}, 0);
  EXPECT_NO_THROW(o.build());
}

TEST(DeltaNetGraph, RefusesMismatchedOperands) {
  {
    Operands o;  // value heads that are no multiple of the key heads
    o.v = o.graph.input("v3", DType::F32, {kDv, 3, kTokens, 1});
    EXPECT_THROW(o.build(), std::logic_error);
  }
  {
    Operands o;  // k of another shape than q
    o.k = o.graph.input("k2", DType::F32, {kDk, 1, kTokens, 1});
    EXPECT_THROW(o.build(), std::logic_error);
  }
  {
    Operands o;  // a gate per value instead of per head (Kimi's, not supported)
    o.g = o.graph.input("g2", DType::F32, {kDv * kHeads, kTokens, 1, 1});
    EXPECT_THROW(o.build(), std::logic_error);
  }
  {
    Operands o;  // a state with the key and value sizes swapped
    o.state = make_persistent("swapped", DType::F32, {kDk, kDv, kHeads, kSlots}, nullptr);
    EXPECT_THROW(o.build(), std::logic_error);
  }
  {
    Operands o;  // q whose values are not contiguous (a transpose)
    o.q = o.graph.permute(o.graph.input("qt", DType::F32, {kHeadsK, kDk, kTokens, 1}), {1, 0, 2, 3});
    EXPECT_THROW(o.build(), std::logic_error);
  }
  {
    Operands o;  // slots for fewer tokens
    o.slots = o.graph.input("few", DType::I32, {kTokens - 1, 1, 1, 1});
    EXPECT_THROW(o.build(), std::logic_error);
  }
}

}  // namespace
}  // namespace sinter
