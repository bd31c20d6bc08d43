// Runs small graphs on a backend (the CPU unless named) for op tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "graph/planner.h"

namespace sinter::testing {

class GraphRunner {
 public:
  explicit GraphRunner(int threads = 2, const std::string& backend = "cpu") {
    auto created = create_backend(backend, BackendOptions{threads});
    EXPECT_TRUE(created) << created.error().message();
    if (created) backend_ = std::move(created).value();
  }
  Graph& graph() { return graph_; }
  Backend& backend() { return *backend_; }

  // Plans and allocates (the arena is the backend's); inputs can be written afterwards.
  void prepare(Tensor* output) {
    graph_.mark_output(output);
    graph_.finalize();
    plan_ = plan_memory(graph_);
    auto arena = backend_->allocate(BufferUsage::kCompute, plan_.arena_bytes);
    ASSERT_TRUE(arena) << arena.error().message();
    arena_ = std::move(arena).value();
    bind_memory(graph_, plan_, arena_->base(), arena_.get());
  }
  void run() {
    const Status status = backend_->compute(graph_);
    ASSERT_TRUE(status) << status.error().message();
  }

  template <class T>
  static void write(Tensor* t, const std::vector<T>& values) {
    ASSERT_EQ(values.size() * sizeof(T), t->bytes());
    tensor_set(*t, values.data(), values.size());
  }
  static std::vector<float> read(const Tensor* t) {
    std::vector<float> out(static_cast<size_t>(t->elements()));
    tensor_get(*t, out.data(), 0, out.size() * sizeof(float));
    return out;
  }

 private:
  Graph graph_;
  MemoryPlan plan_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Buffer> arena_;
};

inline std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace sinter::testing
