// Runs small graphs on the CPU backend for op tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "graph/planner.h"

namespace sinter::testing {

class GraphRunner {
 public:
  explicit GraphRunner(int threads = 2) {
    auto backend = create_backend("cpu", BackendOptions{threads});
    EXPECT_TRUE(backend);
    backend_ = std::move(backend).value();
  }
  Graph& graph() { return graph_; }

  // Plans and allocates; inputs can be written afterwards.
  void prepare(Tensor* output) {
    graph_.mark_output(output);
    graph_.finalize();
    plan_ = plan_memory(graph_);
    arena_.assign(plan_.arena_bytes + kArenaAlignment, 0);
    auto* base = arena_.data() + (kArenaAlignment - reinterpret_cast<uintptr_t>(arena_.data()) % kArenaAlignment);
    bind_memory(graph_, plan_, base);
  }
  void run() { ASSERT_TRUE(backend_->compute(graph_)); }

  template <class T>
  static void write(Tensor* t, const std::vector<T>& values) {
    ASSERT_EQ(values.size() * sizeof(T), t->bytes());
    std::memcpy(t->data, values.data(), t->bytes());
  }
  static std::vector<float> read(const Tensor* t) {
    std::vector<float> out(static_cast<size_t>(t->elements()));
    std::memcpy(out.data(), t->data, out.size() * sizeof(float));
    return out;
  }

 private:
  Graph graph_;
  MemoryPlan plan_;
  std::vector<uint8_t> arena_;
  std::unique_ptr<Backend> backend_;
};

inline std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace sinter::testing
