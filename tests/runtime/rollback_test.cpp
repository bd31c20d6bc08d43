// Rolling a sequence back by a few tokens (speculative decoding's rejected drafts) on models with
// recurrent layers, whose state cannot be rewound: with ContextOptions::rollback_tokens the ops
// keep each sequence's states after its last tokens (memory/recurrent_state.h), and a sequence
// cut back to any of them — within a pass or across passes, in place or forked to another
// sequence — continues with the bits a fresh evaluation of the kept tokens gives. One synthetic
// model per recurrent op (Mamba-1's and Mamba-2's convolution and scan, RWKV-6's token shift and
// WKV, RWKV-7's WKV, LFM2's short convolution, the gated delta rule with either gate) and hybrids, on both
// backends with two threads (each thread copies its own part of a state).
#include <gtest/gtest.h>

#include <cstring>

#include "memory/recurrent_state.h"
#include "runtime/context.h"
#include "support/model_files.h"

namespace sinter {
namespace {

struct RollbackCase {
  const char* architecture;
  const char* preset;
};
const RollbackCase kCases[] = {{"mamba", "tiny"},     {"mamba2", "tiny"},     {"rwkv6", "tiny"},
                               {"rwkv7", "tiny"},     {"lfm2", "tiny"},       {"qwen35", "tiny"},
                               {"falcon-h1", "tiny"}, {"kimi-linear", "tiny"}};

constexpr int32_t kRollback = 4;  // the drafts of a pass: the last accepted token and 3 drafted

std::vector<TokenId> tokens(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(3 + (i * 29 + salt * 83) % 200));
  return ids;
}

using Logits = std::vector<float>;

class Rollback : public ::testing::TestWithParam<std::tuple<int, const char*>> {
 protected:
  void SetUp() override {
    const RollbackCase& c = kCases[std::get<0>(GetParam())];
    auto model = LoadedModel::load(testing::synth_preset(c.architecture, c.preset, 5),
                                   LoadOptions{std::get<1>(GetParam()), 2});
    ASSERT_TRUE(model) << model.error().message();
    ASSERT_FALSE((*model)->model().shape().recurrent_layers.empty());
    ContextOptions options;
    options.n_ctx = 128;
    options.n_seq_max = 2;
    options.rollback_tokens = kRollback;
    auto context = Context::create(*model, options);
    ASSERT_TRUE(context) << context.error().message();
    context_ = std::move(*context);
  }

  // Feeds `ids` to `sequence` from `from` in one pass; the logits after the last.
  Logits feed(const std::vector<TokenId>& ids, Position from, SequenceId sequence = 0) {
    std::vector<BatchEntry> batch;
    for (size_t i = 0; i < ids.size(); ++i)
      batch.push_back({ids[i], from + static_cast<Position>(i), sequence, i + 1 == ids.size()});
    const Status status = context_->decode(batch);
    EXPECT_TRUE(status) << status.error().message();
    if (!status) return {};
    const auto logits = context_->logits(0);
    return Logits(logits.begin(), logits.end());
  }

  // The logits after `ids` evaluated afresh, as sequence 0, in one pass.
  Logits fresh(const std::vector<TokenId>& ids) {
    context_->memory().clear();
    return feed(ids, 0);
  }

  static bool same_bits(const Logits& a, const Logits& b) {
    return !a.empty() && a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  }

  std::unique_ptr<Context> context_;
};

// A prompt, then a pass of 4 tokens (one accepted token and three drafts), then the sequence cut
// back to keep 1..4 of them and continued with another token: the bits of the kept tokens and
// that token evaluated afresh.
TEST_P(Rollback, CutBackWithinAPassContinuesExactly) {
  const auto prompt = tokens(20, 1), drafts = tokens(kRollback, 2);
  const std::vector<TokenId> next = {77};
  SequenceMemory& memory = context_->memory();
  for (int kept = 1; kept <= kRollback; ++kept) {
    SCOPED_TRACE(::testing::Message() << "keeping " << kept << " of the pass's tokens");
    memory.clear();
    feed(prompt, 0);
    feed(drafts, 20);
    const Position cut = 20 + kept;
    ASSERT_EQ(memory.resumable_prefix(0, cut), cut);
    memory.remove(0, cut, -1);
    ASSERT_EQ(memory.max_position(0), cut - 1);
    const Logits continued = feed(next, cut);

    std::vector<TokenId> all = prompt;
    all.insert(all.end(), drafts.begin(), drafts.begin() + kept);
    all.insert(all.end(), next.begin(), next.end());
    EXPECT_TRUE(same_bits(continued, fresh(all)));
  }
  // The comparison can fail: a token dropped is not the same as a token kept.
  memory.clear();
  feed(prompt, 0);
  feed(drafts, 20);
  memory.remove(0, 22, -1);
  const Logits continued = feed(next, 22);
  std::vector<TokenId> wrong = prompt;
  wrong.insert(wrong.end(), {drafts[0], drafts[2], next[0]});
  EXPECT_FALSE(same_bits(continued, fresh(wrong)));
}

// One token a pass (generation): the states of the last passes stay in the ring, so the
// sequence goes back three tokens; further back than the ring holds, it cannot (without a
// checkpoint it would start again).
TEST_P(Rollback, CutBackAcrossPassesContinuesExactly) {
  const auto prompt = tokens(12, 3), generated = tokens(6, 4);
  SequenceMemory& memory = context_->memory();
  feed(prompt, 0);
  for (size_t i = 0; i < generated.size(); ++i) feed({generated[i]}, 12 + static_cast<Position>(i));
  const Position present = 18;
  EXPECT_EQ(memory.resumable_prefix(0, present - kRollback), present - kRollback);
  EXPECT_LT(memory.resumable_prefix(0, present - kRollback - 1), present - kRollback - 1);
  memory.remove(0, present - 3, -1);
  const Logits continued = feed({91}, present - 3);

  std::vector<TokenId> all = prompt;
  all.insert(all.end(), generated.begin(), generated.end() - 3);
  all.push_back(91);
  EXPECT_TRUE(same_bits(continued, fresh(all)));
}

// A sequence forked from a point inside the last pass (copy) starts from the state there, and
// the source keeps its own.
TEST_P(Rollback, AForkFromInsideThePassContinuesExactly) {
  const auto prompt = tokens(16, 5), drafts = tokens(kRollback, 6);
  SequenceMemory& memory = context_->memory();
  feed(prompt, 0);
  feed(drafts, 16);
  memory.copy(0, 1, 0, 18);
  ASSERT_EQ(memory.max_position(1), 17);
  const Logits forked = feed({55}, 18, 1);
  const Logits source = feed({56}, 16 + kRollback, 0);

  std::vector<TokenId> kept = prompt;
  kept.insert(kept.end(), drafts.begin(), drafts.begin() + 2);
  kept.push_back(55);
  EXPECT_TRUE(same_bits(forked, fresh(kept)));
  std::vector<TokenId> whole = prompt;
  whole.insert(whole.end(), drafts.begin(), drafts.end());
  whole.push_back(56);
  EXPECT_TRUE(same_bits(source, fresh(whole)));
}

INSTANTIATE_TEST_SUITE_P(Architectures, Rollback,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kCases))),
                                            ::testing::Values("cpu", "reference")),
                         [](const auto& param_info) {
                           const RollbackCase& c = kCases[std::get<0>(param_info.param)];
                           std::string name =
                               std::string(c.architecture) + "_" + std::get<1>(param_info.param);
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// The memory plan counts the rings: K + 1 more planes of every state tensor per sequence.
TEST(RollbackMemory, TheRingsAreCountedInTheMemory) {
  RecurrentStateOptions options;
  options.layers = {RecurrentLayerShape{{RecurrentStateShape{{3, 8, 1}}, RecurrentStateShape{{4, 4, 2}}}}};
  options.n_seq_max = 3;
  const size_t without = RecurrentState::bytes_for(options);
  options.rollback_tokens = 4;
  EXPECT_EQ(RecurrentState::bytes_for(options), without * 6);  // a slot and a ring of 5
  options.rollback_tokens = kMaxRollbackTokens + 1;
  EXPECT_FALSE(RecurrentState::create(options, nullptr));
}

}  // namespace
}  // namespace sinter
