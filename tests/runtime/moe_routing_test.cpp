// The routing of a mixture-of-experts model on random weights is not degenerate: different tokens
// go to different experts, so the conformance tests against llama.cpp exercise many experts and
// not one pair. Test-only architectures wrap an MoE architecture's forward pass and keep each
// layer's chosen experts (the ffn_moe_topk nodes) as outputs of the graph: Qwen 3 MoE (softmax
// routing), gpt-oss (a biased router, softmax over the chosen) and DeepSeek-V3 (sigmoid routing
// with a selection bias, grouped selection).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "backend/buffer.h"
#include "model/registry.h"
#include "runtime/context.h"
#include "runtime/runtime_test_support.h"
#include "runtime/weight_use.h"

namespace sinter {
namespace {

// A weight read by ids: a lookup (get_rows) or an expert product (mul_mat_id), with the tensor
// holding the ids (kept as an output of the graph).
struct IndexedRead {
  const Tensor* weight;
  Op op;
  const Tensor* ids;
};

class RoutedModel final : public Model {
 public:
  explicit RoutedModel(std::unique_ptr<Model> inner) : inner_(std::move(inner)) {
    shape_ = inner_->shape();
    hparams_ = inner_->hparams();
    current = this;
  }
  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* logits = inner_->build_forward(fx);
    chosen.clear();
    for (int il = 0; il < shape_.n_layer; ++il) {
      Tensor* ids = fx.graph.find("ffn_moe_topk-" + std::to_string(il));
      if (ids != nullptr) {
        fx.graph.mark_output(ids);
        chosen.push_back(ids);
      }
    }
    record_weight_reads(fx.graph, logits);
    return logits;
  }
  static inline std::vector<Tensor*> chosen;  // per MoE layer, of the last graph built
  // Of the last graph built: the weights read whole (products) and those read by ids.
  static inline std::set<const Tensor*> read_whole;
  static inline std::vector<IndexedRead> read_by_ids;
  static inline const Model* current = nullptr;  // the last one made (it owns the weights)

 private:
  // Walks the graph from the logits; keeps the ids of every indexed read as graph outputs (a
  // view's source, so that its bytes survive the pass).
  void record_weight_reads(Graph& graph, Tensor* logits) const {
    std::set<const Tensor*> weights;
    for (const Tensor& w : this->weights()) weights.insert(&w);
    read_whole.clear();
    read_by_ids.clear();
    std::set<Tensor*> seen;
    std::vector<Tensor*> stack = {logits};
    while (!stack.empty()) {
      Tensor* node = stack.back();
      stack.pop_back();
      if (node == nullptr || !seen.insert(node).second) continue;
      for (Tensor* source : node->src) stack.push_back(source);
      if (node->view_source != nullptr) stack.push_back(node->view_source);
      if (node->src[0] == nullptr || weights.count(node->src[0]) == 0) continue;
      Tensor* ids = node->op == Op::kGetRows    ? node->src[1]
                    : node->op == Op::kMulMatId ? node->src[2]
                                                : nullptr;
      // Products read the whole weight; so do per-head products (mul_mat_id without ids).
      if (node->op == Op::kMatMul || (node->op == Op::kMulMatId && ids == nullptr))
        read_whole.insert(node->src[0]);
      if (ids != nullptr) {
        while (ids->view_source != nullptr) ids = ids->view_source;
        graph.mark_output(ids);
        read_by_ids.push_back({node->src[0], node->op, ids});
      }
    }
  }

  std::unique_ptr<Model> inner_;
};

// "test_routes_<inner>": `inner`'s model and synthetic keys, with the chosen experts as outputs.
Architecture routed(const std::string& inner, const SynthDims& dims) {
  const std::string name = "test_routes_" + inner;
  return Architecture{
      name,
      [inner](const Metadata& metadata, WeightBinder& binder) -> Result<std::unique_ptr<Model>> {
        SINTER_ASSIGN(std::unique_ptr<Model> model, find_architecture(inner)->create(metadata, binder));
        return std::unique_ptr<Model>(std::make_unique<RoutedModel>(std::move(model)));
      },
      // The inner architecture's keys (its model reads them under its own name).
      [inner, name](const SynthDims& d, Metadata& out) -> Status {
        SINTER_TRY(find_architecture(inner)->write_synth_hparams(d, out));
        out.set("general.architecture", GgufValue::of_string(name));
        return ok_status();
      },
      {{"small", dims}},
  };
}

// The conformance tests' shapes: 8 experts, 2 per token.
const ArchitectureRegistration kRoutedQwen3Moe{
    routed("qwen3moe", {256, 2, 8, 4, 768, 1024, 1024, 8, 2, 128})};
const ArchitectureRegistration kRoutedGptOss{routed("gpt-oss", {256, 2, 8, 4, 128, 1024, 1024, 8, 2, 128})};
const ArchitectureRegistration kRoutedDeepSeek2{
    routed("deepseek2", {256, 3, 8, 1, 512, 1024, 1024, 8, 2, 128})};

class MoeRouting : public ::testing::TestWithParam<const char*> {
 protected:
  // The routed model of the parameter's architecture (seed 11, its "small" shape) in a context.
  std::unique_ptr<Context> routed_context(const std::string& file_suffix, int32_t n_ctx, int32_t n_batch) {
    const std::string architecture = std::string("test_routes_") + GetParam();
    const std::string file = testing::scratch_dir() + "/../" + architecture + file_suffix + ".gguf";
    SynthOptions synth;
    synth.architecture = architecture;
    synth.preset = "small";
    synth.seed = 11;
    EXPECT_TRUE(synthesize(synth, file));
    auto model = LoadedModel::load(file, LoadOptions{"cpu", 2});
    EXPECT_TRUE(model) << model.error().message();
    if (!model) return nullptr;
    ContextOptions options;
    options.n_ctx = n_ctx;
    if (n_batch > 0) options.n_batch = n_batch;
    auto context = Context::create(std::move(model).value(), options);
    EXPECT_TRUE(context) << context.error().message();
    return context ? std::move(context).value() : nullptr;
  }
};

TEST_P(MoeRouting, TokensGoToManyExpertsInEveryLayer) {
  auto context = routed_context("", 256, 128);
  ASSERT_NE(context, nullptr);
  constexpr int kTokens = 84, kExperts = 8, kUsed = 2;
  std::vector<BatchEntry> batch;
  for (int i = 0; i < kTokens; ++i)
    batch.push_back({static_cast<TokenId>(3 + (i * 37 + 11) % 1000), static_cast<Position>(i), 0, true});
  ASSERT_TRUE(context->decode(batch));
  ASSERT_EQ(RoutedModel::chosen.size(), 2u);  // DeepSeek's first layer is dense
  for (size_t il = 0; il < RoutedModel::chosen.size(); ++il) {
    const Tensor& ids = *RoutedModel::chosen[il];
    ASSERT_EQ(ids.ne[0], kUsed);
    ASSERT_EQ(ids.ne[1], kTokens);
    std::vector<int32_t> values(static_cast<size_t>(kUsed * kTokens));
    tensor_get(ids, values.data(), 0, values.size() * sizeof(int32_t));
    std::vector<int> tokens_per_expert(kExperts, 0);
    std::set<std::pair<int32_t, int32_t>> pairs;
    for (int t = 0; t < kTokens; ++t) {
      const int32_t a = values[static_cast<size_t>(2 * t)], b = values[static_cast<size_t>(2 * t + 1)];
      ASSERT_TRUE(a >= 0 && a < kExperts && b >= 0 && b < kExperts) << a << " " << b;
      EXPECT_NE(a, b) << "token " << t << " chose one expert twice";
      ++tokens_per_expert[static_cast<size_t>(a)];
      ++tokens_per_expert[static_cast<size_t>(b)];
      pairs.insert({std::min(a, b), std::max(a, b)});
    }
    // Every expert serves some tokens and none serves nearly all; many pairs occur.
    for (int e = 0; e < kExperts; ++e) {
      EXPECT_GT(tokens_per_expert[static_cast<size_t>(e)], 0) << "layer " << il << " expert " << e;
      EXPECT_LT(tokens_per_expert[static_cast<size_t>(e)], kTokens * 3 / 4)
          << "layer " << il << " expert " << e;
    }
    EXPECT_GE(pairs.size(), 10u) << "layer " << il;
  }
}

// What one generated token reads of the weights, counted from the ids a pass used (distinct
// experts and rows), matches the memory plan's figure (`sinter inspect`: per token, weights read)
// within 5 %.
TEST_P(MoeRouting, OneTokenReadsWhatTheMemoryPlanSays) {
  auto context = routed_context("-reads", 64, 0);
  ASSERT_NE(context, nullptr);
  const BatchEntry token{17, 0, 0, true};
  ASSERT_TRUE(context->decode(std::span<const BatchEntry>(&token, 1)));

  // The largest share of each weight any node read.
  std::map<const Tensor*, double> share;
  for (const Tensor* w : RoutedModel::read_whole) share[w] = 1.0;
  for (const IndexedRead& read : RoutedModel::read_by_ids) {
    std::vector<int32_t> ids(static_cast<size_t>(read.ids->elements()));
    tensor_get(*read.ids, ids.data(), 0, ids.size() * sizeof(int32_t));
    const std::set<int32_t> distinct(ids.begin(), ids.end());
    const int64_t units = read.op == Op::kMulMatId ? read.weight->ne[2] : read.weight->ne[1];
    share[read.weight] =
        std::max(share[read.weight], static_cast<double>(distinct.size()) / static_cast<double>(units));
  }
  double measured = 0.0;
  for (const auto& [weight, part] : share) measured += part * static_cast<double>(weight->bytes());
  auto uses = weight_uses(*RoutedModel::current);
  ASSERT_TRUE(uses) << uses.error().message();
  const auto planned = static_cast<double>(token_reads(*RoutedModel::current, *uses).bytes);
  std::printf("%s: one token read %.0f bytes of weights, the plan says %.0f\n", GetParam(), measured,
              planned);
  EXPECT_GT(measured, 0.0);
  EXPECT_NEAR(measured / planned, 1.0, 0.05);
}

INSTANTIATE_TEST_SUITE_P(Architectures, MoeRouting, ::testing::Values("qwen3moe", "gpt-oss", "deepseek2"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace sinter
