// A sequence's logits do not depend on how its prompt is split into passes, on the other
// sequences in its batch, or on the thread count: every output is computed the same way.
#include <cstring>

#include "model/synth.h"
#include "runtime/context.h"
#include "runtime/runtime_test_support.h"
#include "support/model_files.h"

namespace sinter {
namespace {

std::vector<TokenId> prompt_tokens(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 37 + salt * 101) % 500));
  return ids;
}

// Logits of every position of `ids` in sequence `seq`, fed in passes of `chunk` tokens, with
// `others` (sequence id -> tokens) interleaved into the same passes.
std::vector<std::vector<float>> run(Context& context, const std::vector<TokenId>& ids, int chunk,
                                    const std::vector<std::vector<TokenId>>& others = {}) {
  context.memory().clear();
  std::vector<std::vector<float>> logits;
  for (size_t start = 0; start < ids.size(); start += static_cast<size_t>(chunk)) {
    std::vector<BatchEntry> batch;
    const size_t end = std::min(ids.size(), start + static_cast<size_t>(chunk));
    for (size_t i = start; i < end; ++i) {
      for (size_t o = 0; o < others.size(); ++o) {
        if (i < others[o].size())
          batch.push_back({others[o][i], static_cast<Position>(i), static_cast<SequenceId>(o + 1), true});
      }
      batch.push_back({ids[i], static_cast<Position>(i), 0, true});
    }
    EXPECT_TRUE(context.decode(batch));
    for (int k = 0; k < context.output_count(); ++k) {
      if (batch[static_cast<size_t>(k)].sequence == 0) {
        const auto l = context.logits(k);
        logits.emplace_back(l.begin(), l.end());
      }
    }
  }
  return logits;
}

bool identical(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

TEST(BatchInvariance, SameLogitsWhateverTheBatch) {
  auto model = LoadedModel::load(testing::tiny_llama(), LoadOptions{"cpu", 2});
  ASSERT_TRUE(model) << model.error().message();
  ContextOptions options;
  options.n_ctx = 256;
  auto context = Context::create(*model, options);
  ASSERT_TRUE(context);
  const auto ids = prompt_tokens(40, 0);
  const auto one_batch = run(**context, ids, 40);
  ASSERT_EQ(one_batch.size(), 40u);
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 7)));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 1)));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 40, {prompt_tokens(40, 1), prompt_tokens(25, 2)})));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 7, {prompt_tokens(33, 3), prompt_tokens(40, 4)})));
  // A different prompt really gives different logits (the comparison can fail).
  EXPECT_FALSE(identical(one_batch, run(**context, prompt_tokens(40, 9), 40)));
}

TEST(BatchInvariance, SameLogitsWhateverTheThreadCount) {
  std::vector<std::vector<float>> reference;
  for (int threads : {1, 2, 3}) {
    auto model = LoadedModel::load(testing::tiny_llama(), LoadOptions{"cpu", threads});
    ASSERT_TRUE(model);
    auto context = Context::create(*model, ContextOptions{});
    ASSERT_TRUE(context);
    const auto logits = run(**context, prompt_tokens(20, 5), 20);
    if (reference.empty()) reference = logits;
    EXPECT_TRUE(identical(reference, logits)) << threads << " threads";
  }
}

// An entry may come as an embedding row instead of a token id (an image's encoder output among the
// text): given its token's own row, the logits are the token's, bit for bit, for every entry of
// the batch; the token id of such an entry is not read.
TEST(BatchEntries, AnEmbeddingRowStandsForItsToken) {
  auto model = LoadedModel::load(testing::tiny_llama(), LoadOptions{"cpu", 1});
  ASSERT_TRUE(model) << model.error().message();
  const GgufTensorInfo* table = (*model)->file().find_tensor("token_embd.weight");
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->type, DType::F32);  // rows read as they are
  const int64_t width = table->shape[0];
  auto context = Context::create(*model, ContextOptions{});
  ASSERT_TRUE(context);
  const auto ids = prompt_tokens(12, 7);
  const auto as_tokens = run(**context, ids, 12);
  // Entries 3 and 8 as rows of the table; their token ids say something else.
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < ids.size(); ++i) batch.push_back({ids[i], static_cast<Position>(i), 0, true});
  const auto* rows = reinterpret_cast<const float*>(table->data);
  for (size_t i : {size_t{3}, size_t{8}}) {
    batch[i].embedding = rows + static_cast<size_t>(ids[i]) * static_cast<size_t>(width);
    batch[i].token = 1 << 30;  // outside the vocabulary: not read
  }
  (*context)->memory().clear();
  ASSERT_TRUE((*context)->decode(batch));
  std::vector<std::vector<float>> as_rows;
  for (int k = 0; k < (*context)->output_count(); ++k) {
    const auto l = (*context)->logits(k);
    as_rows.emplace_back(l.begin(), l.end());
  }
  EXPECT_TRUE(identical(as_tokens, as_rows));
  // Another row really changes the logits (the comparison can fail).
  batch[3].embedding = rows + static_cast<size_t>(ids[4]) * static_cast<size_t>(width);
  (*context)->memory().clear();
  ASSERT_TRUE((*context)->decode(batch));
  const auto changed = (*context)->logits(3);
  EXPECT_NE(std::memcmp(changed.data(), as_tokens[3].data(), changed.size() * sizeof(float)), 0);
}

// RWKV-6 and RWKV-7 (recurrent layers alone: token shifts and WKV states carried from pass to
// pass in each sequence's slot) at the small preset's width, heads of 64 as trained files have,
// Q8_0 products: a sequence's logits are the same bits in one pass, in passes of 7 or of one
// token, beside other sequences (one of which ends early), on 1 to 3 threads.
class RwkvBatchInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(RwkvBatchInvariance, SameLogitsWhateverTheBatchOrTheThreads) {
  const std::string path = testing::scratch_dir() + "/../batch-" + GetParam() + ".gguf";
  SynthOptions synth;
  synth.architecture = GetParam();
  synth.preset = "small";
  synth.type = DType::Q8_0;
  synth.seed = 3;
  ASSERT_TRUE(synthesize(synth, path));
  const auto ids = prompt_tokens(48, 0);
  std::vector<std::vector<float>> reference;
  for (int threads : {1, 2, 3}) {
    auto model = LoadedModel::load(path, LoadOptions{"cpu", threads});
    ASSERT_TRUE(model) << model.error().message();
    ContextOptions options;
    options.n_seq_max = 3;
    auto context = Context::create(*model, options);
    ASSERT_TRUE(context) << context.error().message();
    const auto one_batch = run(**context, ids, 48);
    ASSERT_EQ(one_batch.size(), 48u);
    if (reference.empty()) reference = one_batch;
    EXPECT_TRUE(identical(reference, one_batch)) << threads << " threads";
    EXPECT_TRUE(identical(one_batch, run(**context, ids, 7))) << threads << " threads";
    EXPECT_TRUE(identical(one_batch, run(**context, ids, 1))) << threads << " threads";
    EXPECT_TRUE(identical(one_batch, run(**context, ids, 48, {prompt_tokens(48, 1), prompt_tokens(25, 2)})));
    EXPECT_TRUE(identical(one_batch, run(**context, ids, 7, {prompt_tokens(33, 3), prompt_tokens(48, 4)})));
  }
  auto model = LoadedModel::load(path, LoadOptions{"cpu", 2});
  ASSERT_TRUE(model);
  auto context = Context::create(*model, ContextOptions{});
  ASSERT_TRUE(context);
  // A different prompt really gives different logits (the comparison can fail).
  EXPECT_FALSE(identical(reference, run(**context, prompt_tokens(48, 9), 48)));
}

INSTANTIATE_TEST_SUITE_P(Rwkv, RwkvBatchInvariance, ::testing::Values("rwkv6", "rwkv7"));

TEST(GraphReuse, GenerationStepsReuseTheBuiltGraph) {
  auto model = LoadedModel::load(testing::tiny_llama(), LoadOptions{"cpu", 1});
  ASSERT_TRUE(model);
  auto context = Context::create(*model, ContextOptions{});
  ASSERT_TRUE(context);
  const auto ids = prompt_tokens(10, 6);
  std::vector<BatchEntry> prompt;
  for (size_t i = 0; i < ids.size(); ++i)
    prompt.push_back({ids[i], static_cast<Position>(i), 0, i + 1 == ids.size()});
  ASSERT_TRUE((*context)->decode(prompt));
  for (int step = 0; step < 20; ++step) {
    const BatchEntry next{5, static_cast<Position>(10 + step), 0, true};
    ASSERT_TRUE((*context)->decode(std::span<const BatchEntry>(&next, 1)));
  }
  EXPECT_EQ((*context)->stats().builds, 2);  // the prompt's shape and the one-token shape
  EXPECT_EQ((*context)->stats().reuses, 19);
}

// Architectures with recurrent layers (their synthetic models, every feature on), on each
// backend: the state a sequence carries from pass to pass gives the same bits as one pass, and
// other sequences' states in the batch change none of them.
struct RecurrentCase {
  const char* architecture;
  const char* preset;
};
const RecurrentCase kRecurrentCases[] = {
    {"lfm2", "tiny"},      {"lfm2", "tiny-swa"},  {"lfm2moe", "tiny"},
    {"falcon-h1", "tiny"}, {"jamba", "tiny"},     {"qwen35", "tiny"},
    {"qwen35moe", "tiny"}, {"qwen3next", "tiny"}, {"kimi-linear", "tiny"}};

class RecurrentBatchInvariance : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(RecurrentBatchInvariance, SameLogitsWhateverTheBatch) {
  const RecurrentCase& c = kRecurrentCases[std::get<0>(GetParam())];
  auto model = LoadedModel::load(testing::synth_preset(c.architecture, c.preset, 3),
                                 LoadOptions{std::get<1>(GetParam()), 2});
  ASSERT_TRUE(model) << model.error().message();
  ContextOptions options;
  options.n_ctx = 256;
  options.n_seq_max = 3;
  auto context = Context::create(*model, options);
  ASSERT_TRUE(context) << context.error().message();
  const auto ids = prompt_tokens(48, 0);  // crosses the "swa" models' 16-position windows
  const auto one_batch = run(**context, ids, 48);
  ASSERT_EQ(one_batch.size(), 48u);
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 7)));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 1)));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 48, {prompt_tokens(48, 1), prompt_tokens(25, 2)})));
  EXPECT_TRUE(identical(one_batch, run(**context, ids, 7, {prompt_tokens(33, 3), prompt_tokens(48, 4)})));
  EXPECT_FALSE(identical(one_batch, run(**context, prompt_tokens(48, 9), 48)));
}

INSTANTIATE_TEST_SUITE_P(Architectures, RecurrentBatchInvariance,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kRecurrentCases))),
                                            ::testing::Values("cpu", "reference")),
                         [](const auto& param_info) {
                           const RecurrentCase& c = kRecurrentCases[std::get<0>(param_info.param)];
                           std::string name = std::string(c.architecture) + "_" + c.preset + "_" +
                                              std::get<1>(param_info.param);
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace sinter
