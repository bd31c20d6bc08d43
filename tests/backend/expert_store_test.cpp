// Expert tensors are repacked lazily: a batch packs exactly the experts its tokens chose, and the
// others are never read (their file rows are not touched: the store packs an expert only when a
// product asks for it). Runs the CPU's expert product directly on one thread.
#include "backend/cpu/expert_store.h"

#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/kernels.h"
#include "graph/planner.h"
#include "tensor/convert.h"

namespace sinter::cpu {
namespace {

TEST(ExpertStore, PacksOnlyTheChosenExperts) {
  const int64_t n_in = 256, n_out = 32, n_expert = 8, k = 2, tokens = 3;
  std::vector<float> values(static_cast<size_t>(n_in * n_out * n_expert));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  std::vector<uint8_t> file(row_bytes(DType::Q8_0, n_in) * static_cast<size_t>(n_out * n_expert));
  ASSERT_TRUE(quantize_rows(DType::Q8_0, values.data(), n_in, n_out * n_expert, file.data()));
  Tensor experts = make_persistent("experts", DType::Q8_0, {n_in, n_out, n_expert, 1}, file.data());

  ExpertStore store;
  auto added = store.add(experts, active_kernels());
  ASSERT_TRUE(added);
  ASSERT_TRUE(*added) << "Q8_0 has a packed kernel";
  const ExpertMatrices* matrices = store.find(file.data());
  ASSERT_NE(matrices, nullptr);
  EXPECT_EQ(matrices->packed_count(), 0) << "registering reads nothing";

  Graph graph;
  Tensor* x = graph.input("x", DType::F32, {n_in, 1, tokens, 1});
  Tensor* ids = graph.input("ids", DType::I32, {k, tokens, 1, 1});
  Tensor* out = graph.mul_mat_id(&experts, x, ids);
  graph.mark_output(out);
  graph.finalize();
  const MemoryPlan plan = plan_memory(graph);
  std::vector<uint8_t> arena(plan.arena_bytes + kArenaAlignment);
  auto* base = arena.data() + (kArenaAlignment - reinterpret_cast<uintptr_t>(arena.data()) % kArenaAlignment);
  bind_memory(graph, plan, base, nullptr);
  for (int64_t i = 0; i < x->elements(); ++i)
    static_cast<float*>(x->data)[i] = static_cast<float>(i % 13) / 6.0f - 1.0f;
  const int32_t chosen[] = {5, 1, 1, 6, 6, 5};  // experts 1, 5 and 6 only
  std::copy(std::begin(chosen), std::end(chosen), static_cast<int32_t*>(ids->data));

  Scratch scratch;
  scratch.floats.resize(scratch_floats(*out));
  std::vector<uint8_t> shared(shared_scratch_bytes(*out) + 64);
  auto* shared_base = shared.data() + (64 - reinterpret_cast<uintptr_t>(shared.data()) % 64) % 64;
  const ThreadContext thread{0, 1, nullptr};
  const OpContext ctx{thread, scratch, shared_base, graph, nullptr, &store};
  run_mul_mat_id(*out, ctx);

  EXPECT_EQ(matrices->packed_count(), 3);
  for (int64_t e = 0; e < n_expert; ++e) {
    EXPECT_EQ(matrices->is_packed(e), e == 1 || e == 5 || e == 6) << "expert " << e;
  }
}

}  // namespace
}  // namespace sinter::cpu
