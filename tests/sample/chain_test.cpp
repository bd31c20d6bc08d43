// SamplerChain end to end: order, greedy, penalties with history, bias, errors, reproducibility
// and the statistics of the draw.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "sample/sampler_chain.h"

namespace sinter {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Plain sampling from softmax(logits): every truncation off, temperature 1.
SamplerOptions plain_options(uint64_t seed) {
  SamplerOptions options;
  options.temperature = 1.0f;
  options.top_k = 0;
  options.top_p = 1.0f;
  options.min_p = 0.0f;
  options.seed = seed;
  return options;
}

SamplerOptions greedy_options() {
  SamplerOptions options;
  options.temperature = 0.0f;
  return options;
}

SamplerChain make_chain(const SamplerOptions& options, int32_t vocab_size) {
  auto chain = SamplerChain::create(options, vocab_size);
  EXPECT_TRUE(chain.ok()) << chain.error().message();
  return std::move(chain).value();
}

TokenId sample_ok(SamplerChain& chain, const std::vector<float>& logits) {
  auto token = chain.sample(logits);
  EXPECT_TRUE(token.ok()) << token.error().message();
  return token.ok() ? *token : kNoToken;
}

std::vector<TokenId> sample_many(SamplerChain& chain, const std::vector<float>& logits, int count) {
  std::vector<TokenId> tokens;
  tokens.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) tokens.push_back(sample_ok(chain, logits));
  return tokens;
}

// Pearson's chi-square statistic of observed counts against expected probabilities.
double chi_square(const std::vector<int>& observed, const std::vector<double>& expected_p, int draws) {
  double statistic = 0.0;
  for (size_t i = 0; i < observed.size(); ++i) {
    const double expected = expected_p[i] * draws;
    statistic += (observed[i] - expected) * (observed[i] - expected) / expected;
  }
  return statistic;
}

// --- greedy -------------------------------------------------------------------------------

TEST(SamplerChain, GreedyTakesTheArgmaxWithTheLowestIdOnTies) {
  SamplerChain chain = make_chain(greedy_options(), 5);
  EXPECT_EQ(sample_ok(chain, {1.0f, 5.0f, 2.0f, 5.0f, 0.0f}), 1);
  EXPECT_EQ(sample_ok(chain, {7.0f, 7.0f, 7.0f, 7.0f, 7.0f}), 0);
  EXPECT_EQ(sample_ok(chain, {-kInf, -3.0f, -2.0f, -kInf, -2.0f}), 2);
}

TEST(SamplerChain, GreedyIgnoresTypicalSampling) {
  SamplerOptions options = greedy_options();
  options.typical_p = 0.5f;  // would drop token 0 (see Typical.CanDropTheMostLikelyToken)
  SamplerChain chain = make_chain(options, 3);
  const std::vector<float> logits = {std::log(0.4f), std::log(0.3f), std::log(0.3f)};
  EXPECT_EQ(sample_ok(chain, logits), 0);
  auto distribution = chain.distribution(logits);
  ASSERT_TRUE(distribution.ok());
  ASSERT_EQ(distribution->size(), 1u);
  EXPECT_EQ((*distribution)[0].id, 0);
  EXPECT_EQ((*distribution)[0].p, 1.0f);
}

TEST(SamplerChain, GreedyConsumesNoRandomNumbers) {
  // A greedy chain and a sampling chain with the same seed: the sampling chain's draws must not
  // depend on whether greedy calls were made on another chain; and greedy is seed-independent.
  SamplerOptions a = greedy_options();
  a.seed = 1;
  SamplerOptions b = greedy_options();
  b.seed = 2;
  SamplerChain chain_a = make_chain(a, 4);
  SamplerChain chain_b = make_chain(b, 4);
  const std::vector<float> logits = {0.1f, 0.3f, 0.2f, 0.0f};
  EXPECT_EQ(sample_many(chain_a, logits, 50), sample_many(chain_b, logits, 50));
}

// --- order --------------------------------------------------------------------------------

TEST(SamplerChain, OrderOfStagesMatters) {
  // Logits 0 and -1: p ratio e^-1 = 0.37 passes min_p 0.3 at temperature 1, but after
  // temperature 0.5 the ratio is e^-2 = 0.14 and token 1 is dropped.
  SamplerOptions options = plain_options(1);
  options.min_p = 0.3f;
  options.temperature = 0.5f;
  const std::vector<float> logits = {0.0f, -1.0f};

  options.order = {SamplerStage::kMinP, SamplerStage::kTemperature};
  SamplerChain min_p_first = make_chain(options, 2);
  auto wide = min_p_first.distribution(logits);
  ASSERT_TRUE(wide.ok());
  ASSERT_EQ(wide->size(), 2u);
  EXPECT_NEAR((*wide)[0].p, 1.0 / (1.0 + std::exp(-2.0)), 1e-6);
  EXPECT_NEAR((*wide)[1].p, std::exp(-2.0) / (1.0 + std::exp(-2.0)), 1e-6);

  options.order = {SamplerStage::kTemperature, SamplerStage::kMinP};
  SamplerChain temperature_first = make_chain(options, 2);
  auto narrow = temperature_first.distribution(logits);
  ASSERT_TRUE(narrow.ok());
  ASSERT_EQ(narrow->size(), 1u);
  EXPECT_EQ((*narrow)[0].id, 0);
}

TEST(SamplerChain, StagesLeftOutOfTheOrderDoNotRun) {
  SamplerOptions options = plain_options(1);
  options.top_k = 1;
  options.order = {SamplerStage::kTemperature};
  SamplerChain chain = make_chain(options, 3);
  auto distribution = chain.distribution(std::vector<float>{0.0f, 0.0f, 0.0f});
  ASSERT_TRUE(distribution.ok());
  EXPECT_EQ(distribution->size(), 3u);
}

// The default chain on a vocabulary where every stage has something to do:
// p (at T = 1) of tokens 0..5 proportional to 40, 30, 20, 6, 3, 1.
//   top_k 5 drops token 5;                       left 40 30 20 6 3   (sum 99)
//   top_p 0.9: 40+30+20 = 90/99 = 0.909 >= 0.9;   left 40 30 20
//   min_p 0.6: keeps p >= 0.6 * 40 = 24;          left 40 30
//   temperature 0.5 squares the weights:          1600 : 900
TEST(SamplerChain, DefaultOrderAppliesEveryStage) {
  SamplerOptions options;
  options.seed = 3;
  options.top_k = 5;
  options.top_p = 0.9f;
  options.min_p = 0.6f;
  options.temperature = 0.5f;
  SamplerChain chain = make_chain(options, 6);
  std::vector<float> logits;
  for (double w : {40.0, 30.0, 20.0, 6.0, 3.0, 1.0}) logits.push_back(static_cast<float>(std::log(w)));
  auto distribution = chain.distribution(logits);
  ASSERT_TRUE(distribution.ok());
  ASSERT_EQ(distribution->size(), 2u);
  EXPECT_EQ((*distribution)[0].id, 0);
  EXPECT_EQ((*distribution)[1].id, 1);
  EXPECT_NEAR((*distribution)[0].p, 1600.0 / 2500.0, 1e-6);
  EXPECT_NEAR((*distribution)[1].p, 900.0 / 2500.0, 1e-6);
}

// --- penalties and history ----------------------------------------------------------------

TEST(SamplerChain, RepetitionPenaltyFollowsTheWindow) {
  SamplerOptions options = greedy_options();
  options.repeat_penalty = 1.5f;  // token 0: 3 / 1.5 = 2 < 2.9 once it is in the window
  options.repeat_last_n = 2;
  SamplerChain chain = make_chain(options, 4);
  const std::vector<float> logits = {3.0f, 2.9f, 0.0f, 0.0f};
  EXPECT_EQ(sample_ok(chain, logits), 0);
  ASSERT_TRUE(chain.accept(0).ok());
  EXPECT_EQ(sample_ok(chain, logits), 1);
  ASSERT_TRUE(chain.accept(2).ok());
  EXPECT_EQ(sample_ok(chain, logits), 1);  // window: 0 2
  ASSERT_TRUE(chain.accept(3).ok());
  EXPECT_EQ(sample_ok(chain, logits), 0);  // window: 2 3
}

TEST(SamplerChain, WholeHistoryWindowNeverForgets) {
  SamplerOptions options = greedy_options();
  options.repeat_penalty = 1.5f;
  options.repeat_last_n = -1;
  SamplerChain chain = make_chain(options, 4);
  const std::vector<float> logits = {3.0f, 2.9f, 0.0f, 0.0f};
  ASSERT_TRUE(chain.accept(0).ok());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(chain.accept(2).ok());
  EXPECT_EQ(sample_ok(chain, logits), 1);
  chain.reset();  // forgets
  EXPECT_EQ(sample_ok(chain, logits), 0);
}

TEST(SamplerChain, ZeroWindowDisablesPenalties) {
  SamplerOptions options = greedy_options();
  options.repeat_penalty = 100.0f;
  options.presence_penalty = 100.0f;
  options.repeat_last_n = 0;
  SamplerChain chain = make_chain(options, 4);
  ASSERT_TRUE(chain.accept(0).ok());
  EXPECT_EQ(sample_ok(chain, {3.0f, 2.9f, 0.0f, 0.0f}), 0);
}

TEST(SamplerChain, FrequencyAndPresencePenalties) {
  SamplerOptions options = greedy_options();
  options.frequency_penalty = 0.4f;
  options.presence_penalty = 0.5f;
  SamplerChain chain = make_chain(options, 3);
  const std::vector<float> logits = {3.0f, 2.0f, 1.0f};
  ASSERT_TRUE(chain.accept(0).ok());  // 0: 3 - 0.9 = 2.1 > 2
  EXPECT_EQ(sample_ok(chain, logits), 0);
  ASSERT_TRUE(chain.accept(0).ok());  // 0: 3 - 1.3 = 1.7 < 2
  EXPECT_EQ(sample_ok(chain, logits), 1);
  ASSERT_TRUE(chain.accept(1).ok());  // 1: 2 - 0.9 = 1.1 < 1.7
  EXPECT_EQ(sample_ok(chain, logits), 0);
}

TEST(SamplerChain, AcceptRejectsTokensOutsideTheVocabulary) {
  SamplerChain chain = make_chain(SamplerOptions(), 4);
  EXPECT_FALSE(chain.accept(4).ok());
  EXPECT_FALSE(chain.accept(-1).ok());
  EXPECT_NE(chain.accept(77).error().message().find("token 77"), std::string::npos);
}

// --- logit bias ---------------------------------------------------------------------------

TEST(SamplerChain, LogitBiasBansAndFavours) {
  SamplerOptions options = greedy_options();
  options.logit_bias = {{1, -kInf}};
  SamplerChain banned = make_chain(options, 3);
  EXPECT_EQ(sample_ok(banned, {0.0f, 5.0f, 1.0f}), 2);

  options.logit_bias = {{0, 2.0f}, {0, 2.0f}};  // duplicates add up: 0 + 4 > 3.5
  SamplerChain favoured = make_chain(options, 3);
  EXPECT_EQ(sample_ok(favoured, {0.0f, 3.5f, 1.0f}), 0);
}

TEST(SamplerChain, BannedTokenIsNeverDrawn) {
  SamplerOptions options = plain_options(11);
  options.logit_bias = {{2, -kInf}};
  SamplerChain chain = make_chain(options, 4);
  const std::vector<float> logits = {0.0f, 0.0f, 5.0f, 0.0f};  // token 2 would win almost always
  for (TokenId token : sample_many(chain, logits, 1000)) EXPECT_NE(token, 2);
}

TEST(SamplerChain, EveryTokenBannedIsAnError) {
  SamplerOptions options = plain_options(1);
  options.logit_bias = {{0, -kInf}, {1, -kInf}};
  SamplerChain chain = make_chain(options, 2);
  auto token = chain.sample(std::vector<float>{1.0f, 2.0f});
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.error().message().find("probability zero"), std::string::npos);
  options.temperature = 0.0f;
  SamplerChain greedy = make_chain(options, 2);
  EXPECT_FALSE(greedy.sample(std::vector<float>{1.0f, 2.0f}).ok());
}

// --- input errors -------------------------------------------------------------------------

TEST(SamplerChain, CreateRejectsBadOptions) {
  SamplerOptions options;
  options.top_p = 0.0f;
  auto chain = SamplerChain::create(options, 10);
  ASSERT_FALSE(chain.ok());
  EXPECT_NE(chain.error().message().find("top_p"), std::string::npos);
  options = SamplerOptions();
  options.logit_bias = {{10, 1.0f}};
  EXPECT_FALSE(SamplerChain::create(options, 10).ok());
}

TEST(SamplerChain, RejectsLogitsOfTheWrongSizeOrNonNumbers) {
  SamplerChain chain = make_chain(plain_options(1), 3);
  auto short_logits = chain.sample(std::vector<float>{1.0f, 2.0f});
  ASSERT_FALSE(short_logits.ok());
  EXPECT_NE(short_logits.error().message().find("2 logits"), std::string::npos);
  auto nan = chain.sample(std::vector<float>{1.0f, std::nanf(""), 2.0f});
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.error().message().find("token 1"), std::string::npos);
  EXPECT_FALSE(chain.sample(std::vector<float>{kInf, 1.0f, 2.0f}).ok());
  EXPECT_TRUE(chain.sample(std::vector<float>{-kInf, 1.0f, 2.0f}).ok());
}

// --- reproducibility ----------------------------------------------------------------------

const std::vector<float> eight_logits = {1.0f, 2.5f, -0.5f, 0.25f, 3.0f, 2.5f, -2.0f, 0.75f};

TEST(SamplerChain, SameSeedSameTokens) {
  SamplerOptions options;  // the default chain
  options.seed = 987654321;
  SamplerChain a = make_chain(options, 8);
  SamplerChain b = make_chain(options, 8);
  const std::vector<TokenId> first = sample_many(a, eight_logits, 1000);
  EXPECT_EQ(first, sample_many(b, eight_logits, 1000));
  a.reset();
  EXPECT_EQ(first, sample_many(a, eight_logits, 1000));
}

TEST(SamplerChain, DifferentSeedsDiffer) {
  SamplerChain a = make_chain(plain_options(1), 8);
  SamplerChain b = make_chain(plain_options(2), 8);
  EXPECT_NE(sample_many(a, eight_logits, 1000), sample_many(b, eight_logits, 1000));
}

TEST(SamplerChain, RandomSeedIsReportedAndReproduces) {
  SamplerOptions options = plain_options(0);
  options.seed.reset();
  SamplerChain random = make_chain(options, 8);
  SamplerChain other_random = make_chain(options, 8);
  EXPECT_NE(random.seed(), other_random.seed());
  options.seed = random.seed();
  SamplerChain replay = make_chain(options, 8);
  EXPECT_EQ(sample_many(random, eight_logits, 200), sample_many(replay, eight_logits, 200));
}

// Golden sequences from tests/sample/reference_sampler.py (an independent transcription of the
// documented algorithm): they pin the draw across machines and standard libraries.
TEST(SamplerChain, GoldenSequencePlainDraw) {
  SamplerChain chain = make_chain(plain_options(1234), 8);
  const std::vector<TokenId> expected = {0, 5, 4, 5, 1, 5, 4, 1, 4, 4, 4, 1,
                                         1, 4, 4, 5, 4, 7, 7, 5, 5, 1, 4, 0};
  EXPECT_EQ(sample_many(chain, eight_logits, 24), expected);
}

TEST(SamplerChain, GoldenSequenceDefaultChain) {
  SamplerOptions options;
  options.seed = 20240601;
  SamplerChain chain = make_chain(options, 8);
  const std::vector<TokenId> expected = {4, 1, 5, 1, 1, 4, 4, 4, 5, 4, 4, 4,
                                         4, 4, 5, 1, 4, 4, 4, 5, 5, 4, 4, 5};
  EXPECT_EQ(sample_many(chain, eight_logits, 24), expected);
}

// --- statistics of the draw ---------------------------------------------------------------

// With a fixed seed the outcome is fixed, so this cannot flake; the bound is the 0.1 % critical
// value of chi-square, which a biased draw (say, an off-by-one in the walk) exceeds by far.
TEST(SamplerChain, DrawFollowsTheSoftmax) {
  const std::vector<float> logits = {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -3.0f};
  std::vector<double> expected(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) sum += std::exp(static_cast<double>(logits[i]));
  for (size_t i = 0; i < logits.size(); ++i) expected[i] = std::exp(static_cast<double>(logits[i])) / sum;

  SamplerChain chain = make_chain(plain_options(2024), 6);
  constexpr int kDraws = 200000;
  std::vector<int> observed(logits.size(), 0);
  for (int i = 0; i < kDraws; ++i) ++observed[static_cast<size_t>(sample_ok(chain, logits))];
  EXPECT_LT(chi_square(observed, expected, kDraws), 20.52);  // 5 degrees of freedom, p = 0.001
}

TEST(SamplerChain, DrawFollowsTheTruncatedTemperedDistribution) {
  // top_k 3 keeps tokens 3, 1, 4 (logits 2, 1, 0.5); temperature 0.5 doubles them.
  SamplerOptions options = plain_options(77);
  options.top_k = 3;
  options.temperature = 0.5f;
  SamplerChain chain = make_chain(options, 6);
  const std::vector<float> logits = {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -3.0f};
  const double w3 = std::exp(4.0), w1 = std::exp(2.0), w4 = std::exp(1.0);
  const double total = w3 + w1 + w4;
  constexpr int kDraws = 100000;
  std::vector<int> observed(6, 0);
  for (int i = 0; i < kDraws; ++i) ++observed[static_cast<size_t>(sample_ok(chain, logits))];
  EXPECT_EQ(observed[0] + observed[2] + observed[5], 0);
  const std::vector<int> kept = {observed[3], observed[1], observed[4]};
  EXPECT_LT(chi_square(kept, {w3 / total, w1 / total, w4 / total}, kDraws), 13.82);  // 2 dof, p = 0.001
}

TEST(SamplerChain, WorksOnALargeVocabulary) {
  constexpr int32_t kVocab = 30000;
  std::vector<float> logits(kVocab);
  for (int32_t i = 0; i < kVocab; ++i)
    logits[static_cast<size_t>(i)] = static_cast<float>(std::sin(i * 0.37) * 4.0);
  SamplerOptions options;
  options.seed = 5;
  options.typical_p = 0.9f;
  options.repeat_penalty = 1.3f;
  options.top_k = 0;  // top-p over the whole vocabulary
  SamplerChain chain = make_chain(options, kVocab);
  for (int i = 0; i < 8; ++i) {
    const TokenId token = sample_ok(chain, logits);
    ASSERT_GE(token, 0);
    ASSERT_LT(token, kVocab);
    ASSERT_TRUE(chain.accept(token).ok());
  }
}

}  // namespace
}  // namespace sinter
