// Placement across backends: a backend whose op table lacks some ops runs a model with the CPU
// as its fallback. Its weights go where the op that reads them runs, each graph splits into
// segments per backend, and generation gives the tokens of the CPU alone.
#include "backend/placement.h"

#include <gtest/gtest.h>

#include "graph/planner.h"
#include "runtime/loaded_model.h"
#include "sinter/engine.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

// The reference backend's table without RMS norm, the SwiGLU product and get_rows on F32.
class PartialOps final : public OpCapabilities {
 public:
  explicit PartialOps(const OpCapabilities& full) {
    for (Op op : all_ops()) {
      for (const DTypeTraits& t : all_dtypes())
        paths_[static_cast<size_t>(op)][static_cast<size_t>(t.type)] = full.path(op, t.type);
    }
    paths_[static_cast<size_t>(Op::kRmsNorm)].fill(ExecutionPath::kUnsupported);
    paths_[static_cast<size_t>(Op::kSwiGlu)].fill(ExecutionPath::kUnsupported);
    paths_[static_cast<size_t>(Op::kGetRows)][static_cast<size_t>(DType::F32)] = ExecutionPath::kUnsupported;
  }
};

// "partial": the reference backend's kernels behind the smaller table.
class PartialBackend final : public Backend {
 public:
  PartialBackend() : inner_(create_backend("reference", BackendOptions{1}).value()), ops_(inner_->ops()) {}
  std::string_view name() const override { return "partial"; }
  int threads() const override { return 1; }
  const OpCapabilities& ops() const override { return ops_; }
  Result<std::unique_ptr<Buffer>> allocate(BufferUsage usage, size_t bytes) override {
    return allocate_host_buffer(name(), usage, bytes);
  }
  Result<std::unique_ptr<Buffer>> load_weight(Tensor* weight, Op /*consumer*/) override {
    return adopt_host_bytes(name(), BufferKind::kHostMapped, *weight, weight->bytes());
  }
  size_t scratch_bytes(std::span<Tensor* const>) const override { return 0; }
  Status compute(const Graph& graph, std::span<Tensor* const> nodes) override {
    for (const Tensor* node : nodes) {
      if (!ops_.supports(*node)) return unsupported_node(name(), *node);  // placement's job
    }
    return inner_->compute(graph, nodes);
  }

 private:
  std::unique_ptr<Backend> inner_;
  PartialOps ops_;
};

const BackendRegistration kPartial{"partial", [](const BackendOptions&) -> Result<std::unique_ptr<Backend>> {
                                     return std::unique_ptr<Backend>(std::make_unique<PartialBackend>());
                                   }};

TEST(Placement, WeightsGoWhereTheOpReadingThemRuns) {
  auto loaded = LoadedModel::load(testing::stories_model(), LoadOptions{"partial", 1});
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_NE((*loaded)->fallback(), nullptr);
  EXPECT_EQ((*loaded)->fallback()->name(), "cpu");
  int on_cpu = 0;
  for (const WeightPlacement& weight : (*loaded)->weight_placements()) {
    const bool embedding = weight.name == "token_embd.weight";
    EXPECT_EQ(weight.backend, embedding ? "cpu" : "partial") << weight.name;
    if (embedding) {
      EXPECT_EQ(weight.consumer, Op::kGetRows);
    }
    on_cpu += weight.backend == "cpu" ? 1 : 0;
  }
  EXPECT_EQ(on_cpu, 1);
}

TEST(Placement, UnsupportedOpsRunOnTheFallbackInSegments) {
  auto loaded = LoadedModel::load(testing::stories_model(), LoadOptions{"partial", 1});
  ASSERT_TRUE(loaded) << loaded.error().message();
  Graph graph;
  Tensor* x = graph.input("x", DType::F32, {64, 3, 1, 1});
  Tensor* y = graph.silu(graph.rms_norm(graph.scale(x, 2.0f), 1e-5f));
  graph.mark_output(y);
  graph.finalize();
  auto placement = (*loaded)->place(graph);
  ASSERT_TRUE(placement) << placement.error().message();
  // scale on partial, rms_norm on the CPU, silu back on partial.
  ASSERT_EQ(placement->segments().size(), 3u);
  EXPECT_EQ(placement->segments()[0].backend->name(), "partial");
  EXPECT_EQ(placement->segments()[1].backend->name(), "cpu");
  EXPECT_EQ(placement->segments()[2].backend->name(), "partial");
  EXPECT_EQ(placement->nodes_on(*(*loaded)->fallback()), 1u);
  // Each backend's results are planned in its own arena; the batch input in the primary's.
  ASSERT_EQ(placement->backends().size(), 2u);
  const MemoryPlan plan = plan_memory(graph, placement->node_backends());
  ASSERT_EQ(plan.arenas.size(), 2u);
  for (const Tensor* node : graph.nodes()) {
    EXPECT_EQ(plan.arena_of[static_cast<size_t>(node->index)], node->op == Op::kRmsNorm ? 1 : 0)
        << node->name;
  }
  EXPECT_GE(plan.arenas[1], x->bytes());

  // Without a fallback the node is refused by name.
  auto alone = Placement::place(graph, (*loaded)->backend(), nullptr);
  ASSERT_FALSE(alone);
  EXPECT_NE(alone.error().message().find("rms_norm"), std::string::npos) << alone.error().message();
}

TEST(Placement, GenerationAcrossBackendsGivesTheTokensOfTheCpuAlone) {
  GenerationOptions options;
  options.max_tokens = 60;
  options.sampling.temperature = 0;
  std::vector<std::vector<TokenId>> tokens;
  for (const char* backend : {"cpu", "partial"}) {
    EngineOptions engine_options;
    engine_options.backend = backend;
    engine_options.n_ctx = 128;
    auto engine = Engine::load(testing::stories_model(), engine_options);
    ASSERT_TRUE(engine) << engine.error().message();
    auto result = (*engine)->generate("Lily and Tom", options);
    ASSERT_TRUE(result) << result.error().message();
    tokens.push_back(result->tokens);
  }
  ASSERT_EQ(tokens[0].size(), 60u);
  EXPECT_EQ(tokens[1], tokens[0]);
}

}  // namespace
}  // namespace sinter
