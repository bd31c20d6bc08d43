// Builders of the graph's ops (graph.h): the shapes they make, and a logic_error for operands
// whose shapes or types do not fit.
#include <gtest/gtest.h>

#include <stdexcept>

#include "graph/graph.h"

namespace sinter {
namespace {

using Shape = std::array<int64_t, kMaxDims>;

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
