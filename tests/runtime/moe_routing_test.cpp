// The routing of a mixture-of-experts model on random weights is not degenerate: different tokens
// go to different experts, so the conformance tests against llama.cpp exercise many experts and
// not one pair. Test-only architectures wrap an MoE architecture's forward pass and keep each
// layer's chosen experts (the ffn_moe_topk nodes) as outputs of the graph: Qwen 3 MoE (softmax
// routing), gpt-oss (a biased router, softmax over the chosen) and DeepSeek-V3 (sigmoid routing
// with a selection bias, grouped selection).
#include <algorithm>
#include <set>

#include "backend/buffer.h"
#include "model/registry.h"
#include "runtime/context.h"
#include "runtime/runtime_test_support.h"

namespace sinter {
namespace {

class RoutedModel final : public Model {
 public:
  explicit RoutedModel(std::unique_ptr<Model> inner) : inner_(std::move(inner)) {
    shape_ = inner_->shape();
    hparams_ = inner_->hparams();
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
    return logits;
  }
  static inline std::vector<Tensor*> chosen;  // per MoE layer, of the last graph built

 private:
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

class MoeRouting : public ::testing::TestWithParam<const char*> {};

TEST_P(MoeRouting, TokensGoToManyExpertsInEveryLayer) {
  const std::string architecture = std::string("test_routes_") + GetParam();
  const std::string file = testing::scratch_dir() + "/../" + architecture + ".gguf";
  SynthOptions synth;
  synth.architecture = architecture;
  synth.preset = "small";
  synth.seed = 11;
  ASSERT_TRUE(synthesize(synth, file));
  auto model = LoadedModel::load(file, LoadOptions{"cpu", 2});
  ASSERT_TRUE(model) << model.error().message();
  ContextOptions options;
  options.n_ctx = 256;
  options.n_batch = 128;
  auto context = Context::create(std::move(model).value(), options);
  ASSERT_TRUE(context) << context.error().message();
  constexpr int kTokens = 84, kExperts = 8, kUsed = 2;
  std::vector<BatchEntry> batch;
  for (int i = 0; i < kTokens; ++i)
    batch.push_back({static_cast<TokenId>(3 + (i * 37 + 11) % 1000), static_cast<Position>(i), 0, true});
  ASSERT_TRUE((*context)->decode(batch));
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

INSTANTIATE_TEST_SUITE_P(Architectures, MoeRouting, ::testing::Values("qwen3moe", "gpt-oss", "deepseek2"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace sinter
