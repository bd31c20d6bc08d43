#include "graph/planner.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace sinter {
namespace {

// A chain x -> a -> b -> c -> d of F32 [n] element-wise ops: at most two live at once.
TEST(Planner, ReusesMemoryOfDeadTensors) {
  Graph graph;
  Tensor* x = graph.input("x", DType::F32, {1024, 1, 1, 1});
  Tensor* t = x;
  for (int i = 0; i < 6; ++i) t = graph.scale(t, 2.0f);
  graph.mark_output(t);
  graph.finalize();
  const MemoryPlan plan = plan_memory(graph);
  EXPECT_EQ(plan.unplanned_bytes, 7u * 4096u);
  EXPECT_LE(plan.arena_bytes, 3u * 4096u);  // input, and two intermediates alternating
}

TEST(Planner, LiveTensorsNeverOverlap) {
  Graph graph;
  Tensor* x = graph.input("x", DType::F32, {100, 3, 1, 1});
  Tensor* a = graph.scale(x, 1.0f);
  Tensor* b = graph.silu(a);
  Tensor* c = graph.add(a, b);  // a is still alive here
  Tensor* d = graph.mul(c, x);  // x is alive until here
  Tensor* e = graph.reshape(d, {300, 1, 1, 1});
  Tensor* f = graph.scale(e, 3.0f);
  graph.mark_output(f);
  graph.mark_output(c);  // outputs live to the end
  graph.finalize();
  const MemoryPlan plan = plan_memory(graph);
  const auto& nodes = graph.nodes();
  // Interval of each stored tensor: [index, last reader or end].
  auto last_use = [&](const Tensor* t) {
    int last = t->index;
    for (const Tensor* n : nodes) {
      for (const Tensor* s : n->src) {
        const Tensor* root = s;
        while (root != nullptr && root->view_source != nullptr) root = root->view_source;
        if (root == t) last = std::max(last, n->index);
      }
    }
    return t->is_output ? static_cast<int>(nodes.size()) : last;
  };
  for (const Tensor* p : nodes) {
    for (const Tensor* q : nodes) {
      if (p == q || plan.offsets[p->index] == SIZE_MAX || plan.offsets[q->index] == SIZE_MAX) continue;
      const int p_start = p->role == TensorRole::kInput ? -1 : p->index;
      const int q_start = q->role == TensorRole::kInput ? -1 : q->index;
      const bool overlap_in_time = p_start <= last_use(q) && q_start <= last_use(p);
      const bool overlap_in_memory = plan.offsets[p->index] < plan.offsets[q->index] + q->bytes() &&
                                     plan.offsets[q->index] < plan.offsets[p->index] + p->bytes();
      EXPECT_FALSE(overlap_in_time && overlap_in_memory) << p->name << " and " << q->name;
    }
  }
  EXPECT_EQ(plan.offsets[e->index], SIZE_MAX);  // a view has no storage of its own
}

TEST(Graph, FinalizeDropsUnreachableNodesAndNamesStay) {
  Graph graph;
  Tensor* x = graph.input("x", DType::F32, {8, 1, 1, 1});
  Tensor* used = Graph::named(graph.scale(x, 2.0f), "attn_norm", 3);
  graph.silu(x);  // nobody reads it
  graph.mark_output(used);
  graph.finalize();
  EXPECT_EQ(graph.nodes().size(), 2u);
  EXPECT_EQ(graph.find("attn_norm-3"), used);
}

TEST(Graph, ShapeMistakesAreCaughtAtBuildTime) {
  Graph graph;
  Tensor* a = graph.input("a", DType::F32, {8, 2, 1, 1});
  Tensor* b = graph.input("b", DType::F32, {7, 2, 1, 1});
  EXPECT_THROW(graph.add(a, b), std::logic_error);
  EXPECT_THROW(graph.reshape(a, {5, 3, 1, 1}), std::logic_error);
}

TEST(Graph, AttentionReadsItsKvHeadsFromEitherCacheLayout) {
  Graph graph;
  Tensor* q = graph.input("q", DType::F32, {16, 6, 2, 1});  // 6 heads of 16, 2 tokens
  Tensor* index = graph.input("index", DType::I32, {attention_index_elements(2, 10), 1, 1, 1});
  // One plane per KV head (the KV cache's layout) and all heads' rows per cell: 3 KV heads each.
  Tensor* k_planes = graph.input("k", DType::F16, {16, 10, 3, 1});
  Tensor* v_planes = graph.input("v", DType::F16, {8, 10, 3, 1});
  Tensor* k_rows = graph.input("k_rows", DType::F16, {48, 10, 1, 1});
  Tensor* v_rows = graph.input("v_rows", DType::F16, {24, 10, 1, 1});
  for (auto [k, v] : {std::pair{k_planes, v_planes}, std::pair{k_rows, v_rows}}) {
    const AttentionCacheHeads heads = attention_cache_heads(*k, *v, 16);
    EXPECT_EQ(heads.n_head_kv, 3);
    EXPECT_EQ(heads.head_dim_v, 8);
    EXPECT_EQ(heads.per_row, k == k_rows ? 3 : 1);
    const Tensor* out = graph.attention(q, k, v, index, AttentionParams{});
    EXPECT_EQ(out->ne[0], 8 * 6);  // head_dim_v per query head
    EXPECT_EQ(out->ne[1], 2);
  }
  Tensor* k4 = graph.input("k4", DType::F16, {16, 10, 4, 1});
  Tensor* v4 = graph.input("v4", DType::F16, {8, 10, 4, 1});
  EXPECT_THROW(graph.attention(q, k4, v4, index, AttentionParams{}), std::logic_error);  // 6 heads over 4
  Tensor* k_odd = graph.input("k_odd", DType::F16, {40, 10, 1, 1});
  Tensor* v_odd = graph.input("v_odd", DType::F16, {20, 10, 1, 1});
  EXPECT_THROW(graph.attention(q, k_odd, v_odd, index, AttentionParams{}), std::logic_error);  // 40 / 16
  EXPECT_THROW(graph.attention(q, k_planes, v4, index, AttentionParams{}),
               std::logic_error);                                              // planes differ
  Tensor* short_index = graph.input("short_index", DType::I32, {3, 1, 1, 1});  // under 2 per token
  EXPECT_THROW(graph.attention(q, k_planes, v_planes, short_index, AttentionParams{}), std::logic_error);
}

}  // namespace
}  // namespace sinter

namespace sinter {
namespace {

// Ops read contiguous rows: a strided view reaches them only through copy() (the CPU kernels
// read rows, and a transposed operand would be read wrong, not refused).
TEST(GraphContract, StridedViewsMustBeCopiedFirst) {
  Graph graph;
  Tensor* x = graph.input("x", DType::F32, {8, 4, 1, 1});
  Tensor* w = graph.input("w", DType::F32, {4, 3, 1, 1});
  Tensor* transposed = graph.transpose(x);  // [4, 8], strided
  EXPECT_THROW(graph.rms_norm(transposed, 1e-5f), std::logic_error);
  EXPECT_THROW(graph.norm(transposed, 1e-5f), std::logic_error);
  EXPECT_THROW(graph.silu(transposed), std::logic_error);
  EXPECT_THROW(graph.gelu(transposed), std::logic_error);
  EXPECT_THROW(graph.scale(transposed, 2.0f), std::logic_error);
  EXPECT_THROW(graph.softmax(transposed), std::logic_error);
  EXPECT_THROW(graph.add(transposed, transposed), std::logic_error);
  EXPECT_THROW(graph.mul(transposed, transposed), std::logic_error);
  EXPECT_THROW(graph.swiglu(transposed, transposed), std::logic_error);
  EXPECT_THROW(graph.mul_mat(w, transposed), std::logic_error);
  Tensor* copied = graph.copy(transposed);
  EXPECT_NO_THROW(graph.rms_norm(copied, 1e-5f));
  EXPECT_NO_THROW(graph.mul_mat(w, copied));
  Tensor* positions = graph.input("pos", DType::I32, {2, 1, 1, 1});
  Tensor* four_d = graph.input("h", DType::F32, {8, 2, 2, 2});
  RopeParams rope;
  rope.n_rot = 8;
  EXPECT_THROW(graph.rope(four_d, positions, rope), std::logic_error);
}

}  // namespace
}  // namespace sinter
