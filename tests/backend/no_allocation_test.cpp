// Issue 4: nothing is allocated on the per-token path. A graph of one llama layer for one token
// (norms, quantized matrix products, RoPE, KV stores, attention, SwiGLU, residual adds) is
// computed once (weights are repacked, scratch sized), then again for the next token with the
// same graph: the second compute must not call operator new on any thread.
#include <cmath>

#include "backend/op_test_support.h"
#include "support/allocation_counter.h"
#include "tensor/convert.h"

namespace sinter {
namespace {

using testing::GraphRunner;
using testing::random_values;

// A quantized weight [n_in, n_out] that outlives the graph.
struct Weight {
  std::vector<uint8_t> blocks;
  Tensor tensor;
  Weight(const char* name, DType type, int64_t n_in, int64_t n_out, uint32_t seed)
      : blocks(row_bytes(type, n_in) * static_cast<size_t>(n_out)) {
    const auto values = random_values(static_cast<size_t>(n_in * n_out), seed, 0.5f);
    EXPECT_TRUE(quantize_rows(type, values.data(), n_in, n_out, blocks.data()));
    tensor = make_persistent(name, type, {n_in, n_out, 1, 1}, blocks.data());
  }
};

TEST(CountingAllocations, CountsEveryAllocationWhileAlive) {
  const testing::CountingAllocations allocations;
  std::vector<int> v(10);
  asm volatile("" : : "r"(v.data()) : "memory");  // the allocation is not elided
  EXPECT_EQ(allocations.count(), 1);
}

TEST(CpuBackend, ComputingAGraphAgainForTheNextTokenAllocatesNothing) {
  const int64_t n_embd = 256, head_dim = 64, n_head = 4, n_head_kv = 2, n_ff = 512, cells = 16;
  for (DType type : {DType::Q4_0, DType::Q4_K, DType::F16}) {
    SCOPED_TRACE(dtype_name(type));
    Weight wq("wq", type, n_embd, head_dim * n_head, 1), wk("wk", type, n_embd, head_dim * n_head_kv, 2),
        wv("wv", type, n_embd, head_dim * n_head_kv, 3), wo("wo", type, head_dim * n_head, n_embd, 4),
        gate("gate", type, n_embd, n_ff, 5), up("up", type, n_embd, n_ff, 6),
        down("down", type, n_ff, n_embd, 7);
    std::vector<float> norm_values(static_cast<size_t>(n_embd), 1.5f);
    Tensor norm = make_persistent("norm", DType::F32, {n_embd, 1, 1, 1}, norm_values.data());
    std::vector<uint8_t> k_bytes(row_bytes(DType::F16, head_dim) * cells * n_head_kv),
        v_bytes(k_bytes.size());
    Tensor k_cache = make_persistent("k_cache", DType::F16, {head_dim, cells, n_head_kv, 1}, k_bytes.data());
    Tensor v_cache = make_persistent("v_cache", DType::F16, {head_dim, cells, n_head_kv, 1}, v_bytes.data());

    GraphRunner runner(2);
    Graph& g = runner.graph();
    Tensor* x = g.input("x", DType::F32, {n_embd, 1, 1, 1});
    Tensor* pos = g.input("pos", DType::I32, {1, 1, 1, 1});
    Tensor* slots = g.input("slots", DType::I32, {1, 1, 1, 1});
    Tensor* index = g.input("index", DType::I32, {attention_index_elements(1, cells), 1, 1, 1});
    RopeParams rope;
    rope.n_rot = static_cast<int32_t>(head_dim);
    Tensor* h = g.mul(g.rms_norm(x, 1e-5f), &norm);
    Tensor* q = g.rope(g.reshape(g.mul_mat(&wq.tensor, h), {head_dim, n_head, 1, 1}), pos, rope);
    Tensor* k = g.rope(g.reshape(g.mul_mat(&wk.tensor, h), {head_dim, n_head_kv, 1, 1}), pos, rope);
    Tensor* v = g.mul_mat(&wv.tensor, h);
    AttentionParams params;
    params.scale = 0.125f;
    Tensor* attn =
        g.attention(q, g.store_rows(&k_cache, k, slots), g.store_rows(&v_cache, v, slots), index, params);
    Tensor* x2 = g.add(x, g.mul_mat(&wo.tensor, attn));
    Tensor* h2 = g.mul(g.rms_norm(x2, 1e-5f), &norm);
    Tensor* ff = g.mul_mat(&down.tensor, g.swiglu(g.mul_mat(&gate.tensor, h2), g.mul_mat(&up.tensor, h2)));
    Tensor* out = g.add(x2, ff);
    runner.prepare(out);

    // begin 0, end, then the cells 0..token (the rest unused).
    std::vector<int32_t> index_values(static_cast<size_t>(attention_index_elements(1, cells)), 0);
    for (int32_t token = 0; token < 3; ++token) {
      GraphRunner::write(x, random_values(static_cast<size_t>(n_embd), 10 + static_cast<uint32_t>(token)));
      GraphRunner::write(pos, std::vector<int32_t>{token});
      GraphRunner::write(slots, std::vector<int32_t>{token});
      index_values[1] = token + 1;
      index_values[2 + static_cast<size_t>(token)] = token;
      GraphRunner::write(index, index_values);
      if (token == 0) {
        runner.run();  // the first compute repacks the weights and sizes the scratch
      } else {
        const testing::CountingAllocations allocations;
        runner.run();
        EXPECT_EQ(allocations.count(), 0) << "token " << token;
      }
      const auto result = GraphRunner::read(out);
      for (float r : result) ASSERT_TRUE(std::isfinite(r));
    }
  }
}

}  // namespace
}  // namespace sinter
