// Lazy grammars: the text is free until it contains a trigger, then matched from the trigger's
// first byte; at-start triggers count only as the first non-blank text; a token that would start
// the grammar on text it rejects is never sampled.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sample/grammar/grammar_trigger.h"
#include "sample/sampler_chain.h"

namespace sinter {
namespace {

GrammarTriggers words(std::vector<GrammarTrigger> list) {
  GrammarTriggers triggers;
  triggers.words = std::move(list);
  return triggers;
}

TEST(TriggerScan, FindsATriggerSplitOverPieces) {
  TriggerScan scan(words({{"<call>"}}));
  EXPECT_FALSE(scan.feed("Hello <ca"));
  const auto at = scan.feed("ll>{");
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, 6u);
  EXPECT_EQ(scan.text().substr(*at), "<call>{");
  EXPECT_FALSE(scan.feed("<call>"));  // once only
}

TEST(TriggerScan, EarliestTriggerWins) {
  TriggerScan scan(words({{"BB"}, {"AA"}}));
  const auto at = scan.feed("xAAyBB");
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, 1u);
}

TEST(TriggerScan, AtStartOnlyAsTheFirstNonBlankText) {
  TriggerScan first(words({{"{\"name\"", true}}));
  EXPECT_FALSE(first.feed(" \n{\"na"));
  const auto at = first.feed("me\": 1");
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, 2u);

  TriggerScan later(words({{"{\"name\"", true}}));
  EXPECT_FALSE(later.feed("Sure: {\"name\""));
  EXPECT_FALSE(later.feed(" {\"name\""));
}

TEST(TriggerScan, NotInsideALeadingReasoningBlock) {
  GrammarTriggers triggers = words({{"<call>"}, {"{\"name\"", true}});
  triggers.skip_open = "<think>";
  triggers.skip_close = "</think>";
  TriggerScan scan(triggers);
  EXPECT_FALSE(scan.feed("\n<thi"));
  EXPECT_FALSE(scan.feed("nk>I could write <call> or {\"name\""));
  EXPECT_FALSE(scan.feed(" here.</thi"));
  EXPECT_FALSE(scan.feed("nk>\n"));
  // After the block: at-start triggers count as the first text after it.
  const auto at = scan.feed("{\"name\": 1");
  ASSERT_TRUE(at);
  EXPECT_EQ(scan.text().substr(*at), "{\"name\": 1");

  // A reply that does not open the block is scanned from its start.
  TriggerScan plain(triggers);
  EXPECT_EQ(plain.feed("Sure <call>"), std::optional<size_t>(5));

  // The prompt opened the block: nothing counts before the closing tag.
  triggers.skip_open_in_prompt = true;
  TriggerScan opened(triggers);
  EXPECT_FALSE(opened.feed("<call> maybe"));
  EXPECT_EQ(opened.feed("</think><call>"), std::optional<size_t>(20));
}

TEST(TriggerScan, PeekDoesNotAppend) {
  TriggerScan scan(words({{"<call>"}}));
  ASSERT_FALSE(scan.feed("ab<"));
  EXPECT_EQ(scan.peek("call>"), std::optional<size_t>(2));
  EXPECT_EQ(scan.text(), "ab<");
  EXPECT_FALSE(scan.triggered());
}

constexpr TokenId kEog = 0;

// Token ids: 0 end of generation, then these pieces.
const std::vector<std::string> kPieces = {"</s>", "Hi", " there", "<call>",  "<ca",     "ll>", "{",
                                          "}",    "x",  "1",      "<call>x", "<call>{", " "};

TokenId id_of(const std::string& piece) {
  for (size_t i = 0; i < kPieces.size(); ++i)
    if (kPieces[i] == piece) return static_cast<TokenId>(i);
  ADD_FAILURE() << piece;
  return -1;
}

SamplerChain lazy_chain(const std::string& grammar, GrammarTriggers triggers) {
  std::vector<bool> eog(kPieces.size(), false);
  eog[kEog] = true;
  auto vocab = GrammarVocabulary::build(kPieces, eog);
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  auto chain = SamplerChain::create(greedy, vocab->size());
  EXPECT_TRUE(chain.ok());
  auto compiled = compile_grammar(grammar);
  EXPECT_TRUE(compiled.ok());
  EXPECT_TRUE(chain->set_grammar(*compiled, vocab, std::move(triggers)).ok());
  return std::move(chain).value();
}

// Logits that prefer `preferred` most, the later ones less, every other token at 0.
std::vector<float> prefer(const std::vector<std::string>& preferred) {
  std::vector<float> logits(kPieces.size(), 0.0f);
  float value = 10.0f;
  for (const std::string& piece : preferred) logits[static_cast<size_t>(id_of(piece))] = value--;
  return logits;
}

const char* const kCallGrammar = "root ::= \"<call>\" \"{\" [0-9]* \"}\"\n";

TEST(LazyGrammar, FreeUntilTheTriggerThenConstrained) {
  SamplerChain chain = lazy_chain(kCallGrammar, words({{"<call>"}}));
  EXPECT_FALSE(chain.grammar_active());
  // Free text, even what the grammar would reject, and end of generation.
  for (const char* piece : {"Hi", " there", "x"}) {
    auto token = chain.sample(prefer({piece}));
    ASSERT_TRUE(token.ok());
    EXPECT_EQ(*token, id_of(piece));
    ASSERT_TRUE(chain.accept(*token).ok());
  }
  EXPECT_EQ(*chain.sample(prefer({"</s>"})), kEog);
  // The trigger split over two tokens starts the grammar.
  ASSERT_TRUE(chain.accept(id_of("<ca")).ok());
  EXPECT_FALSE(chain.grammar_active());
  ASSERT_TRUE(chain.accept(id_of("ll>")).ok());
  EXPECT_TRUE(chain.grammar_active());
  // Now "x" and end of generation are not allowed: "{" is.
  auto token = chain.sample(prefer({"x", "</s>", "{"}));
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, id_of("{"));
  ASSERT_TRUE(chain.accept(*token).ok());
  EXPECT_FALSE(chain.accept(id_of("x")).ok());
  ASSERT_TRUE(chain.accept(id_of("1")).ok());
  ASSERT_TRUE(chain.accept(id_of("}")).ok());
  EXPECT_EQ(*chain.sample(prefer({"x", "</s>"})), kEog);
}

TEST(LazyGrammar, ATokenThatWouldStartOnRejectedTextIsNotSampled) {
  SamplerChain chain = lazy_chain(kCallGrammar, words({{"<call>"}}));
  // "<call>x" contains the trigger but "x" breaks the grammar: the next best is taken.
  auto token = chain.sample(prefer({"<call>x", "<call>{"}));
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, id_of("<call>{"));
  EXPECT_FALSE(chain.accept(id_of("<call>x")).ok());
  EXPECT_FALSE(chain.grammar_active());
  ASSERT_TRUE(chain.accept(*token).ok());
  EXPECT_TRUE(chain.grammar_active());
}

TEST(LazyGrammar, AtStartTriggerIgnoredAfterOtherText) {
  SamplerChain chain = lazy_chain(kCallGrammar, words({{"<call>", true}}));
  ASSERT_TRUE(chain.accept(id_of("Hi")).ok());
  ASSERT_TRUE(chain.accept(id_of("<call>x")).ok());  // not the first text: still free
  EXPECT_FALSE(chain.grammar_active());

  SamplerChain first = lazy_chain(kCallGrammar, words({{"<call>", true}}));
  ASSERT_TRUE(first.accept(id_of(" ")).ok());
  ASSERT_TRUE(first.accept(id_of("<call>")).ok());
  EXPECT_TRUE(first.grammar_active());
}

TEST(LazyGrammar, ResetWaitsForTheTriggerAgain) {
  SamplerChain chain = lazy_chain(kCallGrammar, words({{"<call>"}}));
  ASSERT_TRUE(chain.accept(id_of("<call>")).ok());
  EXPECT_TRUE(chain.grammar_active());
  chain.reset();
  EXPECT_FALSE(chain.grammar_active());
  ASSERT_TRUE(chain.accept(id_of("x")).ok());
}

TEST(LazyGrammar, WithoutTriggersTheGrammarHoldsFromTheStart) {
  SamplerChain chain = lazy_chain(kCallGrammar, {});
  EXPECT_TRUE(chain.grammar_active());
  EXPECT_FALSE(chain.accept(id_of("Hi")).ok());
}

}  // namespace
}  // namespace sinter
