// Log-probabilities of generated tokens: they are the model's distribution (log-softmax of the
// raw logits, checked against an independent evaluation of the same tokens), sorted, always
// include the sampled token, and line up with the streamed text, stop strings included.
#include <cmath>
#include <numeric>

#include "runtime/runtime_test_support.h"
#include "runtime/scheduler_test_support.h"
#include "sinter/engine.h"

namespace sinter {
namespace {

std::unique_ptr<Engine> load_stories() {
  EngineOptions options;
  options.threads = 2;
  options.n_ctx = 256;
  auto engine = Engine::load(testing::stories_model(), options);
  EXPECT_TRUE(engine) << engine.error().message();
  return engine ? std::move(engine).value() : nullptr;
}

// The model's log-probabilities at one position, computed here from the logits alone.
struct PositionReference {
  std::vector<double> logprob;  // [vocab]
  std::vector<TokenId> ranked;  // most likely first, ties by lower id
};

// Evaluates prompt + generated from an empty context and returns, for each generated token, the
// distribution it was drawn from (the logits after the token before it).
std::vector<PositionReference> reference(Engine& engine, const std::vector<TokenId>& prompt,
                                         const std::vector<TokenId>& generated) {
  std::vector<TokenId> tokens = prompt;
  tokens.insert(tokens.end(), generated.begin(), generated.end());
  std::vector<int32_t> positions;
  for (size_t i = 0; i < generated.size(); ++i)
    positions.push_back(static_cast<int32_t>(prompt.size() - 1 + i));
  auto logits = engine.eval(tokens, positions);
  EXPECT_TRUE(logits) << logits.error().message();
  std::vector<PositionReference> out;
  for (const auto& l : *logits) {
    PositionReference r;
    long double sum = 0;
    for (float x : l) sum += std::exp(static_cast<long double>(x));
    for (float x : l) r.logprob.push_back(static_cast<double>(static_cast<long double>(x) - std::log(sum)));
    r.ranked.resize(l.size());
    std::iota(r.ranked.begin(), r.ranked.end(), 0);
    std::stable_sort(r.ranked.begin(), r.ranked.end(), [&](TokenId a, TokenId b) {
      return l[static_cast<size_t>(a)] > l[static_cast<size_t>(b)];
    });
    out.push_back(std::move(r));
  }
  return out;
}

GenerationOptions with_logprobs(int32_t top, uint64_t seed, float temperature, int32_t max_tokens = 24) {
  GenerationOptions options;
  options.max_tokens = max_tokens;
  options.sampling.temperature = temperature;
  options.sampling.seed = seed;
  options.ignore_eos = true;
  options.logprobs = true;
  options.top_logprobs = top;
  return options;
}

TEST(Logprobs, AreTheModelsLogSoftmaxForTheSampledTokenAndTheSortedTopK) {
  auto engine = load_stories();
  ASSERT_TRUE(engine);
  const auto prompt = *engine->tokenize("Once upon a time");
  auto result = engine->generate_tokens(prompt, with_logprobs(3, 11, 1.5f));
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_EQ(result->tokens.size(), 24u);
  ASSERT_EQ(result->logprobs.size(), result->tokens.size());
  auto checker = load_stories();
  const auto expected = reference(*checker, prompt, result->tokens);
  int sampled_outside_top = 0;
  for (size_t i = 0; i < result->tokens.size(); ++i) {
    const TokenLogprob& entry = result->logprobs[i];
    const PositionReference& ref = expected[i];
    EXPECT_EQ(entry.token, result->tokens[i]);
    EXPECT_EQ(entry.piece, engine->tokenizer().token_to_piece(entry.token));
    EXPECT_NEAR(entry.logprob, ref.logprob[static_cast<size_t>(entry.token)], 1e-4) << "position " << i;
    ASSERT_EQ(entry.top.size(), 3u);
    bool in_top = false;
    for (size_t r = 0; r < entry.top.size(); ++r) {
      EXPECT_EQ(entry.top[r].token, ref.ranked[r]) << "position " << i << " rank " << r;
      EXPECT_NEAR(entry.top[r].logprob, ref.logprob[static_cast<size_t>(ref.ranked[r])], 1e-4);
      EXPECT_EQ(entry.top[r].piece, engine->tokenizer().token_to_piece(entry.top[r].token));
      if (r > 0) {
        EXPECT_GE(entry.top[r - 1].logprob, entry.top[r].logprob);
      }
      in_top = in_top || entry.top[r].token == entry.token;
    }
    if (!in_top) ++sampled_outside_top;
  }
  // At temperature 1.5 some draws fall outside the top 3: their entries still carry their own
  // log-probability (checked above).
  EXPECT_GT(sampled_outside_top, 0);
}

TEST(Logprobs, TopZeroGivesOnlyTheSampledTokenAndOffGivesNothing) {
  auto engine = load_stories();
  ASSERT_TRUE(engine);
  const auto prompt = *engine->tokenize("The cat");
  auto result = engine->generate_tokens(prompt, with_logprobs(0, 3, 0.0f, 10));
  ASSERT_TRUE(result);
  ASSERT_EQ(result->logprobs.size(), 10u);
  auto checker = load_stories();
  const auto expected = reference(*checker, prompt, result->tokens);
  for (size_t i = 0; i < result->logprobs.size(); ++i) {
    EXPECT_TRUE(result->logprobs[i].top.empty());
    // Greedy picks the argmax of the model's distribution.
    EXPECT_EQ(result->logprobs[i].token, expected[i].ranked[0]);
    EXPECT_NEAR(result->logprobs[i].logprob, expected[i].logprob[static_cast<size_t>(expected[i].ranked[0])],
                1e-4);
  }
  GenerationOptions off = with_logprobs(5, 3, 0.0f, 10);
  off.logprobs = false;
  auto plain = engine->generate_tokens(prompt, off);
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->logprobs.empty());
  EXPECT_EQ(plain->tokens, result->tokens);  // asking for log-probabilities changes nothing else
}

TEST(Logprobs, OutOfRangeTopIsRefused) {
  auto engine = load_stories();
  ASSERT_TRUE(engine);
  for (int32_t top : {-1, kMaxTopLogprobs + 1}) {
    auto result = engine->generate("Hello", with_logprobs(top, 1, 0.0f));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(result.error().message().find("top_logprobs"), std::string::npos);
  }
}

// A stop string made of whole tokens k, k+1 drops both; one that starts inside token k keeps it
// (it showed some of its bytes) and drops k+1.
TEST(Logprobs, TokensWhollyInsideAStopStringAreNotReported) {
  auto engine = load_stories();
  ASSERT_TRUE(engine);
  const auto prompt = *engine->tokenize("Once upon a time");
  auto full = engine->generate_tokens(prompt, with_logprobs(0, 1, 0.0f, 40));
  ASSERT_TRUE(full);
  std::vector<std::string> pieces;
  std::string joined;
  for (TokenId t : full->tokens) {
    pieces.push_back(engine->tokenizer().token_to_piece(t));
    joined += pieces.back();
  }
  ASSERT_EQ(joined, full->text);
  // A token k (not the first) whose piece has 2+ bytes and whose pair with k+1 first occurs there.
  size_t k = 0, offset = 0;
  for (size_t i = 1, at = pieces[0].size(); i + 1 < pieces.size(); at += pieces[i].size(), ++i) {
    if (pieces[i].size() >= 2 && joined.find(pieces[i] + pieces[i + 1]) == at &&
        joined.find(pieces[i].substr(1) + pieces[i + 1]) == at + 1) {
      k = i;
      offset = at;
      break;
    }
  }
  ASSERT_GT(k, 0u) << joined;

  struct Case {
    std::string stop;
    size_t reported;
    size_t text_length;
  };
  const Case cases[] = {{pieces[k] + pieces[k + 1], k, offset},
                        {pieces[k].substr(1) + pieces[k + 1], k + 1, offset + 1}};
  for (const Case& c : cases) {
    GenerationOptions options = with_logprobs(0, 1, 0.0f, 40);
    options.stop = {c.stop};
    auto stopped = engine->generate_tokens(prompt, options);
    ASSERT_TRUE(stopped);
    EXPECT_EQ(stopped->stop_reason, StopReason::kStopString);
    EXPECT_EQ(stopped->tokens.size(), k + 2);
    EXPECT_EQ(stopped->text, joined.substr(0, c.text_length));
    ASSERT_EQ(stopped->logprobs.size(), c.reported) << "stop '" << c.stop << "'";
    for (size_t i = 0; i < c.reported; ++i) EXPECT_EQ(stopped->logprobs[i].token, full->tokens[i]);
  }
}

// Through the scheduler: every text event carries the entries of the tokens it completes, so the
// pieces received so far are always a prefix of the text received so far, and equal it at the end.
// The stop strings never match but hold text back whenever it ends in "e" or ".".
TEST(Logprobs, StreamedEntriesLineUpWithTheStreamedText) {
  auto scheduler = testing::make_stories_scheduler(2);
  auto r = testing::stories_request("Lily and Tom went to the park", 5, 40, 1.2f);
  r.options.logprobs = true;
  r.options.top_logprobs = 2;
  r.options.stop = {"e###", ".###"};
  auto stream = scheduler->submit(r);
  ASSERT_TRUE(stream);
  std::string text, pieces;
  size_t entries = 0;
  int held_back = 0;  // events after which a token's bytes are not all out yet
  std::vector<TokenId> final_tokens;
  for (const auto& event : (*stream)->drain()) {
    if (event.kind == RequestEvent::Kind::kDone) final_tokens = event.tokens;
    if (event.kind != RequestEvent::Kind::kText) continue;
    text += event.text;
    for (const auto& entry : event.logprobs) {
      pieces += entry.piece;
      EXPECT_EQ(entry.top.size(), 2u);
      ++entries;
    }
    EXPECT_EQ(text.compare(0, pieces.size(), pieces), 0) << "pieces run ahead of the text";
    if (pieces.size() < text.size()) ++held_back;  // a token partly shown waits for its last bytes
  }
  EXPECT_EQ(pieces, text);
  EXPECT_EQ(entries, final_tokens.size());
  EXPECT_GT(held_back, 0) << "the test needs text held back by the stop matcher";
}

}  // namespace
}  // namespace sinter
