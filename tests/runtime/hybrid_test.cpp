// A hybrid model (LFM2: short convolutions and attention) through the runtime: its memory is a KV
// cache over the attention layers beside a recurrent state of constant size, the scheduler runs
// sequences together exactly as alone, and a new request resumes a finished one's prefix from a
// checkpoint of the state, with the result of a fresh evaluation, bit for bit. Falcon-H1, whose
// every block has both attention and a Mamba-2 layer, keeps a KV layer and a state per block and
// resumes alike.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "model/synth.h"
#include "runtime/context.h"
#include "runtime/scheduler.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

// An architecture's "tiny" model (LFM2's: 4 blocks, convolution, convolution, attention,
// convolution) with a context long enough for prompts of several hundred tokens.
std::string hybrid_model(const std::string& architecture) {
  const std::string file = testing::scratch_dir() + "/../hybrid-" + architecture + ".gguf";
  SynthOptions options;
  options.architecture = architecture;
  options.preset = "tiny";
  options.dims.n_ctx = 4096;
  options.seed = 9;
  auto status = synthesize(options, file);
  EXPECT_TRUE(status) << status.error().message();
  return file;
}

struct Fixture {
  std::shared_ptr<LoadedModel> model;
  std::shared_ptr<Tokenizer> tokenizer;
};

Fixture& hybrid(const std::string& architecture = "lfm2") {
  static std::map<std::string, Fixture> fixtures;
  auto [it, fresh] = fixtures.emplace(architecture, Fixture{});
  if (fresh) {
    Fixture& f = it->second;
    auto model = LoadedModel::load(hybrid_model(architecture), LoadOptions{"cpu", 2});
    EXPECT_TRUE(model) << model.error().message();
    f.model = std::move(model).value();
    auto tokenizer = Tokenizer::from_metadata(f.model->file().metadata());
    EXPECT_TRUE(tokenizer) << tokenizer.error().message();
    f.tokenizer = std::shared_ptr<Tokenizer>(std::move(tokenizer).value());
  }
  return it->second;
}

std::vector<TokenId> tokens(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 37 + salt * 101) % 500));
  return ids;
}

std::vector<TokenId> joined(std::vector<TokenId> a, const std::vector<TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(HybridMemory, GrowsOnlyWithItsAttentionLayers) {
  const ModelShape& shape = hybrid().model->model().shape();
  ASSERT_EQ(shape.kv_layers.size(), 1u);         // block 2
  ASSERT_EQ(shape.recurrent_layers.size(), 3u);  // blocks 0, 1 and 3
  const auto memory_of = [](int32_t n_ctx) {
    ContextOptions options;
    options.n_ctx = n_ctx;
    options.n_seq_max = 2;
    auto context = Context::create(hybrid().model, options);
    EXPECT_TRUE(context) << context.error().message();
    return std::move(context).value();
  };
  const auto small = memory_of(256);
  const auto large = memory_of(1024);
  EXPECT_EQ(small->memory().kind(), "hybrid");
  // The convolutions keep l_cache − 1 = 2 inputs of n_embd = 64 floats per sequence and layer,
  // whatever the context.
  const size_t state_bytes = 2 * 3 * (2 * 64) * sizeof(float);
  EXPECT_EQ(small->memory().recurrent()->bytes(), state_bytes);
  EXPECT_EQ(large->memory().recurrent()->bytes(), state_bytes);
  // The cache grows by the attention layer's keys and values (2 heads of 16, F16) per cell.
  const size_t cell_bytes = 2 * (2 * 16) * sizeof(uint16_t);
  EXPECT_EQ(large->memory().kv()->bytes() - small->memory().kv()->bytes(), (1024 - 256) * cell_bytes);
  EXPECT_EQ(large->memory().bytes() - small->memory().bytes(), (1024 - 256) * cell_bytes);
  // The estimate before a context exists says the same.
  ContextOptions options;
  options.n_seq_max = 2;
  options.n_ctx = 256;
  const uint64_t small_estimate = memory_bytes_for(shape, options);
  options.n_ctx = 1024;
  EXPECT_EQ(memory_bytes_for(shape, options) - small_estimate, (1024 - 256) * cell_bytes);
}

std::unique_ptr<Scheduler> make(int32_t parallel, int32_t prefill_chunk = 256,
                                const std::string& architecture = "lfm2") {
  SchedulerOptions options;
  options.parallel = parallel;
  options.n_ctx = 1024 * parallel;
  options.prefill_chunk = prefill_chunk;
  auto scheduler = Scheduler::create(hybrid(architecture).model, hybrid(architecture).tokenizer, options);
  EXPECT_TRUE(scheduler) << scheduler.error().message();
  return std::move(scheduler).value();
}

SchedulerRequest request(std::vector<TokenId> prompt, uint64_t seed, int32_t n = 16,
                         float temperature = 0.9f) {
  SchedulerRequest r;
  r.prompt = std::move(prompt);
  r.options.max_tokens = n;
  r.options.ignore_eos = true;
  r.options.sampling.temperature = temperature;
  r.options.sampling.seed = seed;
  r.options.logprobs = true;
  r.options.top_logprobs = 5;
  return r;
}

struct Outcome {
  std::vector<TokenId> tokens;
  std::vector<float> logprobs;  // each generated token's, then its alternatives'
  RequestStats stats;
  bool error = false;
};

Outcome collect(const std::shared_ptr<RequestStream>& stream) {
  Outcome outcome;
  for (const auto& event : stream->drain()) {
    for (const TokenLogprob& entry : event.logprobs) {
      outcome.logprobs.push_back(entry.logprob);
      for (const auto& top : entry.top) outcome.logprobs.push_back(top.logprob);
    }
    if (event.kind == RequestEvent::Kind::kDone) {
      outcome.tokens = event.tokens;
      outcome.stats = event.stats;
    }
    if (event.kind == RequestEvent::Kind::kError) outcome.error = true;
  }
  return outcome;
}

Outcome alone(const SchedulerRequest& r, const std::string& architecture = "lfm2") {
  return collect(*make(1, 256, architecture)->submit(r));
}

// Bit for bit: the same tokens and the same floats.
void expect_same(const Outcome& got, const Outcome& expected, const std::string& what) {
  EXPECT_FALSE(got.error) << what;
  EXPECT_FALSE(got.tokens.empty()) << what;
  EXPECT_EQ(got.tokens, expected.tokens) << what;
  ASSERT_EQ(got.logprobs.size(), expected.logprobs.size()) << what;
  EXPECT_EQ(std::memcmp(got.logprobs.data(), expected.logprobs.data(), got.logprobs.size() * sizeof(float)),
            0)
      << what;
}

TEST(HybridScheduler, ConcurrentRequestsMatchTheSameRequestsAlone) {
  std::vector<SchedulerRequest> requests;
  for (int i = 0; i < 4; ++i)
    requests.push_back(request(tokens(20 + 13 * i, i), 100 + static_cast<uint64_t>(i)));
  std::vector<Outcome> sequential;
  for (const auto& r : requests) sequential.push_back(alone(r));
  for (int chunk : {256, 3}) {
    auto scheduler = make(4, chunk);
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (const auto& r : requests) streams.push_back(*scheduler->submit(r));
    for (size_t i = 0; i < streams.size(); ++i) {
      expect_same(collect(streams[i]), sequential[i],
                  "request " + std::to_string(i) + ", chunk " + std::to_string(chunk));
    }
  }
}

// The state keeps checkpoints at the end of each prompt and every 512 tokens (the passes of 256
// prompt tokens end at 512): a request that continues a finished prompt resumes at its end, one
// that leaves it earlier at the last checkpoint before, and both give what a fresh evaluation
// gives.
void expect_resumes_from_a_checkpoint(const std::string& architecture) {
  const std::vector<TokenId> shared = tokens(600, 7);
  const SchedulerRequest first = request(joined(shared, tokens(10, 8)), 1, 8, 0.0f);
  const SchedulerRequest continued = request(joined(first.prompt, tokens(12, 9)), 2, 8, 0.0f);
  const SchedulerRequest diverging = request(joined(shared, tokens(10, 10)), 3, 8, 0.0f);

  auto scheduler = make(2, 256, architecture);
  const Outcome a = collect(*scheduler->submit(first));
  const Outcome b = collect(*scheduler->submit(continued));
  const Outcome c = collect(*scheduler->submit(diverging));
  EXPECT_EQ(a.stats.prompt_tokens_reused, 0);
  EXPECT_EQ(b.stats.prompt_tokens_reused, 610);  // the first prompt, whole
  EXPECT_EQ(c.stats.prompt_tokens_reused, 512);  // the checkpoint before the prompts part
  const SchedulerMetrics metrics = scheduler->take_metrics();
  EXPECT_EQ(metrics.prompt_tokens_reused, 610 + 512);
  EXPECT_EQ(metrics.prefix_cache_hits, 2);

  expect_same(a, alone(first, architecture), "first");
  expect_same(b, alone(continued, architecture), "continued");
  expect_same(c, alone(diverging, architecture), "diverging");
}

TEST(HybridScheduler, ResumesASharedPrefixFromACheckpoint) { expect_resumes_from_a_checkpoint("lfm2"); }

// Falcon-H1 "tiny": 2 blocks, each with attention (2 KV heads of 32) and a Mamba-2 layer (inner
// 96 in 4 heads of 24, 2 groups, a state of 16, a kernel of 4): KV layer i and recurrent layer i
// are both block i.
TEST(HybridMemory, ABlockCanKeepBothAKvLayerAndAState) {
  const ModelShape& shape = hybrid("falcon-h1").model->model().shape();
  ASSERT_EQ(shape.kv_layers.size(), 2u);
  ASSERT_EQ(shape.recurrent_layers.size(), 2u);
  ContextOptions options;
  options.n_ctx = 256;
  options.n_seq_max = 2;
  auto context = Context::create(hybrid("falcon-h1").model, options);
  ASSERT_TRUE(context) << context.error().message();
  EXPECT_EQ((*context)->memory().kind(), "hybrid");
  // Per block and sequence: the convolution's last 3 inputs of 96 + 2·2·16 channels, and the
  // scan state of 16 × 24 × 4.
  const size_t state_bytes = 2 * 2 * (3 * (96 + 2 * 2 * 16) + 16 * 24 * 4) * sizeof(float);
  EXPECT_EQ((*context)->memory().recurrent()->bytes(), state_bytes);
  // Two KV layers of 2 heads of 32 (F16), keys and values, per cell.
  EXPECT_EQ((*context)->memory().kv()->bytes(), size_t{256} * 2 * 2 * (2 * 32) * sizeof(uint16_t));
}

TEST(HybridScheduler, ResumesAParallelHybridFromACheckpoint) {
  expect_resumes_from_a_checkpoint("falcon-h1");
}

// A Qwen 3.5 file with the multi-token-prediction block llama.cpp's converter keeps (block_count
// counts it, nextn_predict_layers 1) loads, binds the block and does not run it: its trunk (the
// same tensors: synth draws each from the seed and its name) generates what the file without it
// does.
TEST(HybridModels, AQwen35FileWithAnMtpBlockRunsItsTrunkAlone) {
  const auto make_file = [](const char* preset) {
    const std::string file = testing::scratch_dir() + "/qwen35-" + preset + ".gguf";
    SynthOptions options;
    options.architecture = "qwen35";
    options.preset = preset;
    options.seed = 9;
    auto status = synthesize(options, file);
    EXPECT_TRUE(status) << status.error().message();
    return file;
  };
  std::vector<std::vector<TokenId>> outputs;
  for (const char* preset : {"tiny", "tiny-mtp"}) {
    auto model = LoadedModel::load(make_file(preset), LoadOptions{"cpu", 2});
    ASSERT_TRUE(model) << preset << ": " << model.error().message();
    const Metadata& metadata = (*model)->file().metadata();
    EXPECT_EQ(metadata.get<uint32_t>("qwen35.block_count").value_or(0),
              std::string(preset) == "tiny" ? 4u : 5u);
    EXPECT_EQ((*model)->model().shape().n_layer, 4);
    auto made = Tokenizer::from_metadata(metadata);
    ASSERT_TRUE(made) << made.error().message();
    std::shared_ptr<Tokenizer> tokenizer(std::move(made).value());
    SchedulerOptions options;
    options.parallel = 1;
    options.n_ctx = 512;
    auto scheduler = Scheduler::create(std::move(model).value(), tokenizer, options);
    ASSERT_TRUE(scheduler) << scheduler.error().message();
    SchedulerRequest r;
    r.prompt = tokens(24, 5);
    r.options.max_tokens = 12;
    r.options.ignore_eos = true;
    r.options.sampling.temperature = 0.0f;
    auto stream = (*scheduler)->submit(std::move(r));
    ASSERT_TRUE(stream);
    for (const auto& event : (*stream)->drain()) {
      if (event.kind == RequestEvent::Kind::kDone) outputs.push_back(event.tokens);
    }
  }
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].size(), 12u);
  EXPECT_EQ(outputs[0], outputs[1]);
}

}  // namespace
}  // namespace sinter
