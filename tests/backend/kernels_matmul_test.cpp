// The matmul and get_rows ops on weights repacked by the backend (prepare_weight) against the
// same ops on the file's rows: the same bits for every type, batch size and thread count
// (the plain path runs the reference dot products), and the capability matrix says which ran.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/kernels.h"
#include "graph/planner.h"
#include "tensor/convert.h"

namespace sinter {
namespace {

struct Run {
  std::unique_ptr<Backend> backend;
  Graph graph;
  MemoryPlan plan;
  std::vector<uint8_t> arena;
  std::vector<std::unique_ptr<Buffer>> weight_buffers;
};

// Finalizes the graph (its outputs marked) and binds its tensors to a fresh arena.
void allocate(Run& run) {
  run.graph.finalize();
  run.plan = plan_memory(run.graph);
  run.arena.assign(run.plan.arena_bytes + kArenaAlignment, 0);
  auto* base =
      run.arena.data() + (kArenaAlignment - reinterpret_cast<uintptr_t>(run.arena.data()) % kArenaAlignment);
  bind_memory(run.graph, run.plan, base, nullptr);
}

std::vector<float> values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>((s >> 8) % 20001) / 10000.0f - 1.0f;
  }
  return v;
}

// y = W·x (or get_rows of W by ids when `ids` is not empty) on a fresh backend.
std::vector<float> run_op(Tensor weight, bool prepare, int threads, const std::vector<float>& x, int64_t m,
                          const std::vector<int32_t>& ids = {}) {
  Run run;
  run.backend = std::move(create_backend("cpu", BackendOptions{threads})).value();
  std::vector<uint8_t> copy(static_cast<const uint8_t*>(weight.data),
                            static_cast<const uint8_t*>(weight.data) + weight.bytes());
  weight.data = copy.data();
  if (prepare) {
    auto buffer = run.backend->load_weight(&weight, Op::kMatMul);
    EXPECT_TRUE(buffer);
    if (buffer) run.weight_buffers.push_back(std::move(buffer).value());
  }
  Tensor* out;
  Tensor* input;
  if (ids.empty()) {
    input = run.graph.input("x", DType::F32, {weight.ne[0], m, 1, 1});
    out = run.graph.mul_mat(&weight, input);
  } else {
    input = run.graph.input("ids", DType::I32, {static_cast<int64_t>(ids.size()), 1, 1, 1});
    out = run.graph.get_rows(&weight, input);
  }
  run.graph.mark_output(out);
  allocate(run);
  if (ids.empty()) {
    std::memcpy(input->data, x.data(), input->bytes());
  } else {
    std::memcpy(input->data, ids.data(), input->bytes());
  }
  EXPECT_TRUE(run.backend->compute(run.graph));
  std::vector<float> result(static_cast<size_t>(out->elements()));
  std::memcpy(result.data(), out->data, result.size() * sizeof(float));
  return result;
}

constexpr DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16,   DType::Q4_0, DType::Q4_1, DType::Q5_0,
                            DType::Q5_1, DType::Q8_0, DType::IQ4_NL, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                            DType::Q2_K, DType::Q3_K, DType::IQ4_XS, DType::MXFP4};

TEST(KernelsMatMul, RepackedAndFileRowsGiveTheSameBits) {
  auto backend = create_backend("cpu", BackendOptions{1});
  ASSERT_TRUE(backend);
  for (DType type : kTypes) {
    for (int64_t n_out : {40, 260}) {  // 260: enough 16-row groups for threads to share them
      SCOPED_TRACE(std::string(dtype_name(type)) + " n_out " + std::to_string(n_out));
      const int64_t n_in = 512;
      std::vector<uint8_t> blocks(row_bytes(type, n_in) * n_out);
      ASSERT_TRUE(quantize_rows(type, values(static_cast<size_t>(n_in * n_out), 3).data(), n_in, n_out,
                                blocks.data()));
      const Tensor w = make_persistent("w", type, {n_in, n_out, 1, 1}, blocks.data());
      const bool repacked = (*backend)->path(Op::kMatMul, type) == ExecutionPath::kRepacked;
      if (n_out == 40)
        std::printf("%s: %s\n", std::string(dtype_name(type)).c_str(),
                    execution_path_name((*backend)->path(Op::kMatMul, type)));
      const auto x = values(static_cast<size_t>(n_in * 9), 4);
      // Every batch size and thread count against one column at a time on one thread.
      std::vector<float> one_by_one;
      for (int64_t c = 0; c < 9; ++c) {
        const std::vector<float> column(x.begin() + c * n_in, x.begin() + (c + 1) * n_in);
        const auto y = run_op(w, false, 1, column, 1);
        one_by_one.insert(one_by_one.end(), y.begin(), y.end());
      }
      for (int threads : {1, 2, 3}) {
        for (int64_t m : {1, 2, 5, 9}) {
          const std::vector<float> batch(x.begin(), x.begin() + m * n_in);
          const auto plain = run_op(w, false, threads, batch, m);
          const auto packed = run_op(w, true, threads, batch, m);
          ASSERT_EQ(std::memcmp(plain.data(), one_by_one.data(), plain.size() * sizeof(float)), 0)
              << threads << " threads, m " << m;
          ASSERT_EQ(std::memcmp(packed.data(), one_by_one.data(), packed.size() * sizeof(float)), 0)
              << threads << " threads, m " << m << (repacked ? " (repacked)" : "");
        }
      }
      const std::vector<int32_t> ids = {39, 0, 17, 16, 39};
      EXPECT_EQ(run_op(w, true, 2, {}, 0, ids), run_op(w, false, 2, {}, 0, ids));
    }
  }
}

// Only the ops that read the 16-row groups get them: a matrix-shaped weight that an element-wise
// op reads (Command R+'s [head_dim, n_head] Q/K norm weights, read by mul) keeps the file's rows.
TEST(KernelsMatMul, OnlyProductsAndLookupsGetTheRepackedLayout) {
  auto backend = create_backend("cpu", BackendOptions{1});
  ASSERT_TRUE(backend);
  ASSERT_EQ((*backend)->path(Op::kMatMul, DType::F32), ExecutionPath::kRepacked);
  const int64_t n_in = 32, n_out = 8;
  std::vector<float> file = values(static_cast<size_t>(n_in * n_out), 5);
  for (Op consumer : {Op::kMul, Op::kMatMul, Op::kGetRows}) {
    std::vector<float> rows = file;
    Tensor w = make_persistent("w", DType::F32, {n_in, n_out, 1, 1}, rows.data());
    auto buffer = (*backend)->load_weight(&w, consumer);
    ASSERT_TRUE(buffer);
    const bool repacked = (*buffer)->kind() == BufferKind::kHostRepacked;
    EXPECT_EQ(repacked, consumer != Op::kMul) << op_name(consumer);
    if (!repacked) {
      EXPECT_EQ(w.data, rows.data());
      EXPECT_EQ(std::memcmp(w.data, file.data(), file.size() * sizeof(float)), 0);
    }
  }
}

// dst [n_out, k, tokens] of experts [n_in, n_out, n_expert] (loaded for mul_mat_id when
// `prepare`: repacked on first use) by ids [k, tokens], x [n_in, 1, tokens].
std::vector<float> run_experts(const Tensor& experts, bool prepare, int threads, const std::vector<float>& x,
                               const std::vector<int32_t>& ids, int64_t k) {
  Run run;
  run.backend = std::move(create_backend("cpu", BackendOptions{threads})).value();
  std::vector<uint8_t> copy(static_cast<const uint8_t*>(experts.data),
                            static_cast<const uint8_t*>(experts.data) + experts.bytes());
  Tensor w = experts;
  w.data = copy.data();
  if (prepare) {
    auto buffer = run.backend->load_weight(&w, Op::kMulMatId);
    EXPECT_TRUE(buffer);
    if (buffer) run.weight_buffers.push_back(std::move(buffer).value());
  }
  const int64_t tokens = static_cast<int64_t>(ids.size()) / k;
  Tensor* input = run.graph.input("x", DType::F32, {w.ne[0], 1, tokens, 1});
  Tensor* id = run.graph.input("ids", DType::I32, {k, tokens, 1, 1});
  Tensor* out = run.graph.mul_mat_id(&w, input, id);
  run.graph.mark_output(out);
  allocate(run);
  std::memcpy(input->data, x.data(), input->bytes());
  std::memcpy(id->data, ids.data(), id->bytes());
  EXPECT_TRUE(run.backend->compute(run.graph));
  std::vector<float> result(static_cast<size_t>(out->elements()));
  std::memcpy(result.data(), out->data, result.size() * sizeof(float));
  return result;
}

// Each column of an expert product is the dense product of its expert's matrix with its token's
// column, bit for bit, for every type the dense path runs: in batches where experts get no token
// (expert 5), one (generation: one token) or many (expert 0 in every token), whether the
// experts are repacked on first use or read from the file's rows, on 1 to 3 threads.
TEST(KernelsMatMul, ExpertProductsAreTheDenseProductsOfTheirExperts) {
  const int64_t n_in = 512, n_out = 40, n_expert = 6, k = 2;
  for (DType type : kTypes) {
    SCOPED_TRACE(dtype_name(type));
    std::vector<uint8_t> blocks(row_bytes(type, n_in) * n_out * n_expert);
    ASSERT_TRUE(quantize_rows(type, values(static_cast<size_t>(n_in * n_out * n_expert), 8).data(), n_in,
                              n_out * n_expert, blocks.data()));
    const Tensor experts = make_persistent("experts", type, {n_in, n_out, n_expert, 1}, blocks.data());
    for (int64_t tokens : {1, 9}) {
      std::vector<int32_t> ids;
      for (int64_t t = 0; t < tokens; ++t) {
        ids.push_back(0);
        ids.push_back(static_cast<int32_t>(1 + t % 4));
      }
      const auto x = values(static_cast<size_t>(n_in * tokens), 9);
      std::vector<float> dense;  // [n_out, k, tokens] from the experts' 2-D matrices
      for (int64_t t = 0; t < tokens; ++t) {
        const std::vector<float> column(x.begin() + t * n_in, x.begin() + (t + 1) * n_in);
        for (int64_t j = 0; j < k; ++j) {
          const int32_t e = ids[static_cast<size_t>(t * k + j)];
          const Tensor matrix =
              make_persistent("w", type, {n_in, n_out, 1, 1}, blocks.data() + e * experts.nb[2]);
          const auto y = run_op(matrix, true, 1, column, 1);
          dense.insert(dense.end(), y.begin(), y.end());
        }
      }
      for (int threads : {1, 2, 3}) {
        for (bool prepare : {true, false}) {
          const auto got = run_experts(experts, prepare, threads, x, ids, k);
          ASSERT_EQ(got.size(), dense.size());
          ASSERT_EQ(std::memcmp(got.data(), dense.data(), got.size() * sizeof(float)), 0)
              << tokens << " tokens, " << threads << " threads" << (prepare ? ", repacked" : "");
        }
      }
    }
  }
}

// Products of several weights with the same columns (the Q, K and V projections; the FFN's gate
// and up) run as one pool of work over all the matrices (cpu_backend.cpp's steps): each output
// must keep the bits of its product run alone, whichever matrices share the run (the same or
// another rounding of the columns, more matrices than one run takes) and however threads split it.
TEST(KernelsMatMul, ProductsOfTheSameColumnsKeepTheBitsOfEachAlone) {
  struct Case {
    std::vector<DType> types;
    std::vector<int64_t> n_out;
  };
  const Case cases[] = {
      {{DType::Q4_0, DType::Q4_0, DType::Q4_0}, {260, 40, 40}},
      {{DType::Q4_K, DType::Q4_K, DType::Q6_K}, {130, 24, 260}},
      {{DType::F16, DType::F16, DType::F16, DType::F16, DType::F16}, {40, 260, 8, 72, 130}},
      {{DType::Q4_0, DType::Q8_0, DType::Q8_0, DType::Q5_K, DType::IQ4_XS}, {72, 40, 260, 24, 130}},
  };
  const int64_t n_in = 512;
  for (const Case& c : cases) {
    std::vector<std::vector<uint8_t>> blocks(c.types.size());
    std::vector<Tensor> weights;
    for (size_t i = 0; i < c.types.size(); ++i) {
      blocks[i].resize(row_bytes(c.types[i], n_in) * c.n_out[i]);
      ASSERT_TRUE(quantize_rows(c.types[i], values(static_cast<size_t>(n_in * c.n_out[i]), 10 + i).data(),
                                n_in, c.n_out[i], blocks[i].data()));
      weights.push_back(
          make_persistent("w" + std::to_string(i), c.types[i], {n_in, c.n_out[i], 1, 1}, blocks[i].data()));
    }
    for (int threads : {1, 2, 3}) {
      for (int64_t m : {1, 5}) {
        SCOPED_TRACE(std::string(dtype_name(c.types[0])) + " case, " + std::to_string(threads) +
                     " threads, m " + std::to_string(m));
        const auto x = values(static_cast<size_t>(n_in * m), 5);
        sinter::Run run;
        run.backend = std::move(create_backend("cpu", BackendOptions{threads})).value();
        std::vector<std::vector<uint8_t>> copies;
        std::vector<Tensor> prepared = weights;
        for (Tensor& w : prepared) {
          copies.emplace_back(static_cast<const uint8_t*>(w.data),
                              static_cast<const uint8_t*>(w.data) + w.bytes());
          w.data = copies.back().data();
          auto buffer = run.backend->load_weight(&w, Op::kMatMul);
          ASSERT_TRUE(buffer);
          run.weight_buffers.push_back(std::move(buffer).value());
        }
        Tensor* input = run.graph.input("x", DType::F32, {n_in, m, 1, 1});
        std::vector<Tensor*> outs;
        for (Tensor& w : prepared) outs.push_back(run.graph.mul_mat(&w, input));
        for (Tensor* out : outs) run.graph.mark_output(out);
        allocate(run);
        std::memcpy(input->data, x.data(), input->bytes());
        ASSERT_TRUE(run.backend->compute(run.graph));
        for (size_t i = 0; i < outs.size(); ++i) {
          const auto alone = run_op(weights[i], true, threads, x, m);
          ASSERT_EQ(static_cast<size_t>(outs[i]->elements()), alone.size());
          EXPECT_EQ(std::memcmp(outs[i]->data, alone.data(), alone.size() * sizeof(float)), 0)
              << "product " << i << " (" << dtype_name(c.types[i]) << ")";
        }
      }
    }
  }
}

}  // namespace
}  // namespace sinter
