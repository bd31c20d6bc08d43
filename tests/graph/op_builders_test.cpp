// Builders of the graph's ops (graph.h): the shapes they make, and a logic_error for operands
// whose shapes or types do not fit.
#include <gtest/gtest.h>

#include <stdexcept>

#include "graph/graph.h"

namespace sinter {
namespace {

using Shape = std::array<int64_t, kMaxDims>;

TEST(OpBuilders, SsmConvShapes) {
  Graph g;
  Tensor* x = g.input("x", DType::F32, {6, 5, 1, 1});
  Tensor* w = g.input("w", DType::F32, {4, 6, 1, 1});
  Tensor* state = g.input("state", DType::F32, {3, 6, 2, 1});
  Tensor* slots = g.input("slots", DType::I32, {5, 1, 1, 1});
  EXPECT_EQ(g.ssm_conv(x, w, state, slots)->ne, (Shape{6, 5, 1, 1}));
  // Channels of a wider token (the x half of a fused projection).
  Tensor* wide = g.input("xz", DType::F32, {12, 5, 1, 1});
  Tensor* half = g.view(wide, {6, 5, 1, 1}, wide->nb, 0);
  EXPECT_EQ(g.ssm_conv(half, w, state, slots)->ne, (Shape{6, 5, 1, 1}));

  EXPECT_THROW(g.ssm_conv(x, g.input("w7", DType::F32, {4, 7, 1, 1}), state, slots), std::logic_error);
  EXPECT_THROW(
      g.ssm_conv(x, g.input("k1", DType::F32, {1, 6, 1, 1}), g.input("s0", DType::F32, {0, 6, 2, 1}), slots),
      std::logic_error);
  EXPECT_THROW(g.ssm_conv(x, w, g.input("s2", DType::F32, {2, 6, 2, 1}), slots), std::logic_error);
  EXPECT_THROW(g.ssm_conv(x, w, g.input("s16", DType::F16, {3, 6, 2, 1}), slots), std::logic_error);
  EXPECT_THROW(g.ssm_conv(x, w, state, g.input("slots4", DType::I32, {4, 1, 1, 1})), std::logic_error);
  EXPECT_THROW(g.ssm_conv(x, w, state, g.input("slotsf", DType::F32, {5, 1, 1, 1})), std::logic_error);
  EXPECT_THROW(g.ssm_conv(g.input("x16", DType::F16, {6, 5, 1, 1}), w, state, slots), std::logic_error);
  EXPECT_THROW(g.ssm_conv(g.transpose(g.input("xt", DType::F32, {5, 6, 1, 1})), w, state, slots),
               std::logic_error);
}

TEST(OpBuilders, SsmScanShapes) {
  // d_state 8, head_dim 4, 6 heads, 2 groups, 3 tokens, 2 slots.
  Graph g;
  Tensor* x = g.input("x", DType::F32, {4, 6, 3, 1});
  Tensor* dt = g.input("dt", DType::F32, {6, 3, 1, 1});
  Tensor* a = g.input("A", DType::F32, {1, 6, 1, 1});
  Tensor* a1 = g.input("A1", DType::F32, {8, 6, 1, 1});
  Tensor* b = g.input("B", DType::F32, {8, 2, 3, 1});
  Tensor* c = g.input("C", DType::F32, {8, 2, 3, 1});
  Tensor* state = g.input("state", DType::F32, {8, 4, 6, 2});
  Tensor* slots = g.input("slots", DType::I32, {3, 1, 1, 1});
  EXPECT_EQ(g.ssm_scan(x, dt, a, b, c, state, slots)->ne, (Shape{4, 6, 3, 1}));
  EXPECT_EQ(g.ssm_scan(x, dt, a1, b, c, state, slots)->ne, (Shape{4, 6, 3, 1}));
  // x, B and C as views of one fused tensor [4·6 + 2·2·8, 3].
  Tensor* xbc = g.input("xbc", DType::F32, {56, 3, 1, 1});
  const size_t f = sizeof(float), token = xbc->nb[1];
  Tensor* xv = g.view(xbc, {4, 6, 3, 1}, {f, 4 * f, token, 3 * token}, 0);
  Tensor* bv = g.view(xbc, {8, 2, 3, 1}, {f, 8 * f, token, 3 * token}, 24 * f);
  Tensor* cv = g.view(xbc, {8, 2, 3, 1}, {f, 8 * f, token, 3 * token}, 40 * f);
  EXPECT_EQ(g.ssm_scan(xv, dt, a, bv, cv, state, slots)->ne, (Shape{4, 6, 3, 1}));

  EXPECT_THROW(g.ssm_scan(x, g.input("dt5", DType::F32, {5, 3, 1, 1}), a, b, c, state, slots),
               std::logic_error);
  EXPECT_THROW(g.ssm_scan(x, dt, g.input("A3", DType::F32, {3, 6, 1, 1}), b, c, state, slots),
               std::logic_error);
  EXPECT_THROW(g.ssm_scan(x, dt, a, g.input("B4", DType::F32, {8, 4, 3, 1}),
                          g.input("C4", DType::F32, {8, 4, 3, 1}), state, slots),
               std::logic_error);  // 4 groups do not divide 6 heads
  EXPECT_THROW(g.ssm_scan(x, dt, a, b, g.input("C7", DType::F32, {7, 2, 3, 1}), state, slots),
               std::logic_error);
  EXPECT_THROW(g.ssm_scan(x, dt, a, b, c, g.input("s3", DType::F32, {8, 4, 3, 2}), slots), std::logic_error);
  EXPECT_THROW(g.ssm_scan(x, dt, a, b, c, state, g.input("slots2", DType::I32, {2, 1, 1, 1})),
               std::logic_error);
  // A head's values must be contiguous with the next head's: x's heads at a stride of their own.
  Tensor* gaps = g.view(xbc, {4, 6, 3, 1}, {f, 5 * f, token, 3 * token}, 0);
  EXPECT_THROW(g.ssm_scan(gaps, dt, a, b, c, state, slots), std::logic_error);
}

TEST(OpBuilders, TokenShiftShapes) {
  Graph g;
  Tensor* x = g.input("x", DType::F32, {6, 5, 1, 1});
  Tensor* state = g.input("state", DType::F32, {6, 3, 1, 1});
  Tensor* slots = g.input("slots", DType::I32, {5, 1, 1, 1});
  EXPECT_EQ(g.token_shift(x, state, slots)->ne, (Shape{6, 5, 1, 1}));
  EXPECT_THROW(g.token_shift(x, g.input("s7", DType::F32, {7, 3, 1, 1}), slots), std::logic_error);
  EXPECT_THROW(g.token_shift(x, g.input("s3d", DType::F32, {6, 3, 2, 1}), slots), std::logic_error);
  EXPECT_THROW(g.token_shift(x, state, g.input("slots6", DType::I32, {6, 1, 1, 1})), std::logic_error);
}

// l2_norm over heads of a token: rows at any stride, values contiguous.
TEST(OpBuilders, L2NormShapes) {
  Graph g;
  Tensor* heads = g.input("heads", DType::F32, {8, 4, 3, 1});
  Tensor* strided = g.view(heads, {6, 4, 3, 1}, heads->nb, 2 * sizeof(float));
  EXPECT_EQ(g.l2_norm(strided, 1e-6f)->ne, (Shape{6, 4, 3, 1}));
  EXPECT_TRUE(g.l2_norm(strided, 1e-6f)->is_contiguous());
  EXPECT_THROW(g.l2_norm(g.transpose(heads), 1e-6f), std::logic_error);
  EXPECT_THROW(g.l2_norm(heads, -1.0f), std::logic_error);
}

}  // namespace
}  // namespace sinter
