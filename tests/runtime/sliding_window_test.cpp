// Sliding-window layers through the runtime: the tiny llama with a window on its first layer
// (test-only architectures that wrap llama's forward pass and only change the shape's windows),
// so that the KV cache has a full pool and a windowed one.
#include <cmath>
#include <cstring>

#include "model/registry.h"
#include "runtime/context.h"
#include "runtime/runtime_test_support.h"
#include "runtime/scheduler.h"
#include "runtime/scheduler_test_support.h"

namespace sinter {
namespace {

// Llama's model and forward pass; layer 0 attends to the last `window` positions.
class WindowedLlama final : public Model {
 public:
  WindowedLlama(std::unique_ptr<Model> llama, int32_t window) : llama_(std::move(llama)) {
    shape_ = llama_->shape();
    hparams_ = llama_->hparams();
    shape_.kv_windows.assign(shape_.kv_layers.size(), 0);
    shape_.kv_windows[0] = window;
  }
  Tensor* build_forward(ForwardContext& fx) const override { return llama_->build_forward(fx); }

 private:
  std::unique_ptr<Model> llama_;  // its weights are this model's weights() (bound by name)
};

Architecture windowed_llama(const std::string& name, int32_t window) {
  Architecture arch;
  arch.name = name;
  arch.create = [window](const Metadata& metadata, WeightBinder& binder) -> Result<std::unique_ptr<Model>> {
    SINTER_ASSIGN(std::unique_ptr<Model> llama, find_architecture("llama")->create(metadata, binder));
    return std::unique_ptr<Model>(std::make_unique<WindowedLlama>(std::move(llama), window));
  };
  arch.write_synth_hparams = [name](const SynthDims& dims, Metadata& out) -> Status {
    SINTER_TRY(find_architecture("llama")->write_synth_hparams(dims, out));
    out.set("general.architecture", GgufValue::of_string(name));
    return ok_status();
  };
  arch.presets = {{"tiny", {64, 2, 4, 2, 192, 512, 512}}};  // llama's
  return arch;
}

constexpr int32_t kWindow = 8;
const ArchitectureRegistration kWindowed{windowed_llama("test_llama_window8", kWindow)};
const ArchitectureRegistration kWideWindow{windowed_llama("test_llama_window4096", 4096)};

// The tiny llama's weights (same preset and seed) under a windowed architecture.
std::shared_ptr<LoadedModel> load_windowed(const std::string& arch) {
  const std::string file = testing::scratch_dir() + "/../" + arch + ".gguf";
  SynthOptions options;
  options.architecture = arch;
  options.preset = "tiny";
  options.seed = 7;
  auto status = synthesize(options, file);
  EXPECT_TRUE(status) << status.error().message();
  auto model = LoadedModel::load(file, LoadOptions{"cpu", 2});
  EXPECT_TRUE(model) << model.error().message();
  return std::move(model).value();
}

std::vector<TokenId> prompt_tokens(int n) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 37 + 11) % 500));
  return ids;
}

// Logits of every position of `ids` (sequence 0), decoded `chunk` tokens per decode() call.
std::vector<std::vector<float>> run(Context& context, const std::vector<TokenId>& ids, size_t chunk) {
  context.cache().clear();
  std::vector<std::vector<float>> logits;
  for (size_t start = 0; start < ids.size(); start += chunk) {
    std::vector<BatchEntry> batch;
    for (size_t i = start; i < std::min(ids.size(), start + chunk); ++i)
      batch.push_back({ids[i], static_cast<Position>(i), 0, true});
    EXPECT_TRUE(context.decode(batch));
    for (int k = 0; k < context.output_count(); ++k) {
      const auto l = context.logits(k);
      logits.emplace_back(l.begin(), l.end());
    }
  }
  return logits;
}

bool identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::unique_ptr<Context> make_context(std::shared_ptr<LoadedModel> model, int32_t n_ctx, int32_t n_batch) {
  ContextOptions options;
  options.n_ctx = n_ctx;
  options.n_batch = n_batch;
  auto context = Context::create(std::move(model), options);
  EXPECT_TRUE(context) << context.error().message();
  return std::move(context).value();
}

// Two pools whose window covers the whole text compute exactly what one pool does.
TEST(SlidingWindow, AWindowLongerThanTheTextChangesNothing) {
  auto plain = make_context(LoadedModel::load(testing::tiny_llama(), LoadOptions{"cpu", 2}).value(), 256, 16);
  auto wide = make_context(load_windowed("test_llama_window4096"), 256, 16);
  ASSERT_EQ(wide->cache().pool_count(), 2);
  const auto ids = prompt_tokens(100);
  const auto expected = run(*plain, ids, 16);
  const auto got = run(*wide, ids, 16);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t p = 0; p < got.size(); ++p) EXPECT_TRUE(identical(got[p], expected[p])) << "position " << p;
}

// The windowed pool of a token-by-token context holds 9 cells; the logits are those of one
// context large enough to drop nothing early, bit for bit, and differ from full attention's.
TEST(SlidingWindow, LogitsDoNotDependOnThePoolSize) {
  auto model = load_windowed("test_llama_window8");
  auto roomy = make_context(model, 256, 64);
  auto tight = make_context(model, 256, 1);
  ASSERT_EQ(roomy->cache().pool_cells(1), kWindow + 64);
  ASSERT_EQ(tight->cache().pool_cells(1), kWindow + 1);
  const auto ids = prompt_tokens(100);
  const auto expected = run(*roomy, ids, 100);  // passes of 64 and 36 tokens
  const auto got = run(*tight, ids, 100);       // 100 passes of one token
  EXPECT_LE(tight->cache().pool_high_water(1), kWindow + 1);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t p = 0; p < got.size(); ++p) EXPECT_TRUE(identical(got[p], expected[p])) << "position " << p;

  auto plain = make_context(LoadedModel::load(testing::tiny_llama(), LoadOptions{"cpu", 2}).value(), 256, 64);
  const auto full_attention = run(*plain, ids, 100);
  EXPECT_TRUE(identical(full_attention[kWindow - 1], expected[kWindow - 1]));  // all within the window
  EXPECT_FALSE(identical(full_attention.back(), expected.back()));
}

// A shift rotates the keys of every pool: 40 tokens decoded at positions 10..49 and moved back
// by 10 give the next token the logits of a pass over the same tokens at 0..39 (attention with
// rotary embeddings sees relative positions), up to the rounding of rotating F16 keys again.
TEST(SlidingWindow, ShiftRotatesTheKeysOfEveryPool) {
  for (const char* arch : {"test_llama_window8", "test_llama_window4096"}) {
    auto model = load_windowed(arch);
    auto shifted = make_context(model, 64, 64);
    auto fresh = make_context(model, 64, 64);
    const auto ids = prompt_tokens(41);
    std::vector<BatchEntry> batch;
    for (size_t i = 0; i < 40; ++i) batch.push_back({ids[i], static_cast<Position>(i + 10), 0, false});
    ASSERT_TRUE(shifted->decode(batch));
    shifted->cache().shift(0, 10, 50, -10);
    ASSERT_TRUE(shifted->cache().has_pending_shift());
    ASSERT_TRUE(shifted->decode(std::vector<BatchEntry>{{ids[40], 40, 0, true}}));
    EXPECT_FALSE(shifted->cache().has_pending_shift());

    for (auto& entry : batch) entry.position -= 10;
    batch.push_back({ids[40], 40, 0, true});
    ASSERT_TRUE(fresh->decode(batch));
    const auto got = shifted->logits(0);
    const auto expected = fresh->logits(0);
    float worst = 0.0f;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
    EXPECT_LT(worst, 1e-2f) << arch;
  }
}

SchedulerRequest greedy(std::vector<TokenId> prompt, int32_t max_tokens) {
  SchedulerRequest r;
  r.prompt = std::move(prompt);
  r.options.max_tokens = max_tokens;
  r.options.sampling.temperature = 0.0f;
  r.options.ignore_eos = true;
  return r;
}

testing::ChoiceOutcome outcome(Scheduler& scheduler, SchedulerRequest request) {
  auto stream = scheduler.submit(std::move(request));
  EXPECT_TRUE(stream) << stream.error().message();
  auto choices = testing::collect_choices(*stream);
  EXPECT_EQ(choices.size(), 1u);
  EXPECT_FALSE(choices[0].error) << choices[0].error_message;
  return choices[0];
}

// A cached prompt is reused only as far as the windowed pool still holds what its next token
// sees; what is reused gives the tokens of a computation from scratch.
TEST(SlidingWindow, SchedulerReusesOnlyWhatThePoolsStillHold) {
  auto model = load_windowed("test_llama_window8");
  auto tokenizer = Tokenizer::from_metadata(model->file().metadata());
  ASSERT_TRUE(tokenizer);
  std::shared_ptr<const Tokenizer> shared_tokenizer = std::move(tokenizer).value();
  SchedulerOptions options;
  options.parallel = 2;
  options.n_ctx = 512;
  auto scheduler = Scheduler::create(model, shared_tokenizer, options).value();

  const auto prompt = prompt_tokens(40);
  const auto first = outcome(*scheduler, greedy(prompt, 5));
  ASSERT_EQ(first.tokens.size(), 5u);
  // The same prompt again: position 39 would see 32..38, long dropped (the cache kept 36..43).
  const auto again = outcome(*scheduler, greedy(prompt, 5));
  EXPECT_EQ(again.stats.prompt_tokens_reused, 0);
  EXPECT_EQ(again.tokens, first.tokens);
  // Prompt and the four generated tokens that were decoded, then more: position 44 sees
  // 37..43, all held.
  std::vector<TokenId> longer = prompt;
  longer.insert(longer.end(), first.tokens.begin(), first.tokens.begin() + 4);
  for (TokenId extra : {TokenId{100}, TokenId{200}, TokenId{300}}) longer.push_back(extra);
  const auto continued = outcome(*scheduler, greedy(longer, 6));
  EXPECT_EQ(continued.stats.prompt_tokens_reused, 44);

  auto fresh = Scheduler::create(model, shared_tokenizer, options).value();
  const auto from_scratch = outcome(*fresh, greedy(longer, 6));
  EXPECT_EQ(from_scratch.stats.prompt_tokens_reused, 0);
  EXPECT_EQ(continued.tokens, from_scratch.tokens);
}

}  // namespace
}  // namespace sinter
