// Grammar-constrained sampling: the trie mask equals a per-token check over a vocabulary with
// multi-byte, partial-UTF-8, duplicate, empty and end-of-generation tokens; the fast path picks
// the same tokens as always masking; end of generation only where the grammar can end.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sample/grammar/grammar_mask.h"
#include "sample/sampler_chain.h"

namespace sinter {
namespace {

constexpr TokenId kEog = 1;

// Every byte 0x01..0xFF as a token, words, UTF-8 whole and in pieces, duplicates, an empty
// token, one starting with NUL and an end-of-generation token.
std::shared_ptr<const GrammarVocabulary> test_vocabulary() {
  std::vector<std::string> pieces = {"", "</s>", "<s>", std::string("\0x", 2)};
  for (int b = 1; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
  for (const char* word : {"hello",     " world", "{",        "\"",        "\":",      "\": ",
                           "{\"",       "},",     "}",        "[",         "]",        ", ",
                           "true",      "false",  "null",     "12",        "345",      "-1",
                           "0.5",       "e+",     "ab",       "abc",       "bca",      "a",
                           "é",         "\xc3",   "\xa9",     "\xc3\xa9x", "\xe4\xb8", "\xad\xe6\x96\x87",
                           "中",        "中文",   "\xa9\xc3", "😀",         "\xf0\x9f", "\x98\x80",
                           "  ",        "\n",     " (",       "+",         "*",        "1+2",
                           "x\xc3\xa9", "hello",  "Hello",    " \"",       "\"}",      "\xe2\x82\xac",
                           "€5",        "\xff",   "\xc0\x80"}) {
    pieces.push_back(word);
  }
  std::vector<bool> eog(pieces.size(), false);
  eog[kEog] = true;
  return GrammarVocabulary::build(std::move(pieces), std::move(eog));
}

std::shared_ptr<const CompiledGrammar> compile(const std::string& text) {
  auto compiled = compile_grammar(text);
  EXPECT_TRUE(compiled.ok()) << compiled.error().message();
  return compiled.ok() ? *compiled : nullptr;
}

const char* const kGrammars[] = {
    "root ::= \"hello\" \" world\"?\n",
    "root ::= [a-c]+ | [0-9]{1,3} (\"+\" [0-9]{1,3})*\n",
    "root ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\"\npair ::= str \":\" ws val\nval ::= str | num | "
    "\"true\" | "
    "\"false\" | \"null\" | \"[\" ws (val (\",\" ws val)*)? \"]\"\nstr ::= \"\\\"\" [a-z]* \"\\\"\"\nnum ::= "
    "\"-\"? "
    "[0-9]+ (\".\" [0-9]+)?\nws ::= [ \\n]*\n",
    "root ::= [é-ë中-文😀]+ \"x\"?\n",
    "root ::= [^a-z\\x00-\\x1f]{2,6}\n",
    "root ::= . . .\n",
    "root ::= (\"a\" | \"ab\" | \"abc\") (\"bca\" | \"c\")* \"€\"?\n",
    "root ::= [<>/s]+\n",
};

// Random walks through the grammar: at every step the trie mask equals the per-token check.
TEST(GrammarMask, EqualsTheCheckOfEveryToken) {
  auto vocab = test_vocabulary();
  std::mt19937 rng(7);
  for (const char* text : kGrammars) {
    auto grammar = compile(text);
    ASSERT_TRUE(grammar);
    for (int walk = 0; walk < 20; ++walk) {
      GrammarMatcher matcher(grammar);
      GrammarMaskScratch scratch;
      std::vector<uint8_t> mask;
      for (int step = 0; step < 12; ++step) {
        ASSERT_TRUE(grammar_token_mask(matcher, *vocab, mask, scratch).ok());
        std::vector<TokenId> allowed;
        for (TokenId id = 0; id < vocab->size(); ++id) {
          auto one = grammar_allows_token(matcher, *vocab, id);
          ASSERT_TRUE(one.ok());
          ASSERT_EQ(mask[static_cast<size_t>(id)] != 0, *one)
              << text << " token " << id << " '" << vocab->piece(id) << "' at step " << step;
          if (*one) allowed.push_back(id);
        }
        EXPECT_EQ(mask[kEog] != 0, matcher.can_complete());
        if (allowed.empty()) break;
        const TokenId next = allowed[rng() % allowed.size()];
        if (next == kEog) break;
        ASSERT_TRUE(grammar_accept_token(matcher, *vocab, next).ok());
      }
    }
  }
}

TEST(GrammarMask, NotAllowedTokens) {
  auto vocab = test_vocabulary();
  GrammarMatcher matcher(compile("root ::= [^z]*\n"));
  GrammarMaskScratch scratch;
  std::vector<uint8_t> mask;
  ASSERT_TRUE(grammar_token_mask(matcher, *vocab, mask, scratch).ok());
  EXPECT_EQ(mask[0], 0);  // empty piece
  EXPECT_EQ(mask[3], 0);  // starts with NUL
  EXPECT_EQ(mask[2], 1);  // a control token that does not end generation is text: "<s>"
  EXPECT_EQ(mask[kEog], 1);
}

TEST(GrammarMask, OnlyEndOfGenerationWhenFinished) {
  auto vocab = test_vocabulary();
  GrammarMatcher matcher(compile("root ::= \"ab\"\n"));
  ASSERT_TRUE(grammar_accept_token(matcher, *vocab, 4 + 'a' - 1).ok());  // the byte token "a"
  EXPECT_FALSE(grammar_accept_token(matcher, *vocab, kEog).ok());
  ASSERT_TRUE(matcher.accept("b").ok());
  ASSERT_TRUE(matcher.finished());
  GrammarMaskScratch scratch;
  std::vector<uint8_t> mask;
  ASSERT_TRUE(grammar_token_mask(matcher, *vocab, mask, scratch).ok());
  for (TokenId id = 0; id < vocab->size(); ++id)
    EXPECT_EQ(mask[static_cast<size_t>(id)] != 0, id == kEog) << id;
}

SamplerChain grammar_chain(const SamplerOptions& options, const std::string& grammar, bool fast_path) {
  auto vocab = test_vocabulary();
  auto chain = SamplerChain::create(options, vocab->size());
  EXPECT_TRUE(chain.ok());
  EXPECT_TRUE(chain->set_grammar(compile(grammar), vocab).ok());
  chain->set_grammar_fast_path(fast_path);
  return std::move(chain).value();
}

// Runs a chain over random logits until end of generation or 40 tokens.
std::vector<TokenId> generate(SamplerChain& chain, uint32_t logit_seed) {
  std::mt19937 rng(logit_seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<TokenId> out;
  std::vector<float> logits(static_cast<size_t>(chain.vocab_size()));
  for (int i = 0; i < 40; ++i) {
    for (float& l : logits) l = normal(rng);
    auto token = chain.sample(logits);
    EXPECT_TRUE(token.ok()) << token.error().message();
    if (!token.ok()) break;
    out.push_back(*token);
    if (*token == kEog) break;
    EXPECT_TRUE(chain.accept(*token).ok());
  }
  return out;
}

TEST(GrammarSampling, FastPathGivesTheSameGreedyTokensAsMasking) {
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  for (const char* grammar : kGrammars) {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
      SamplerChain fast = grammar_chain(greedy, grammar, true);
      SamplerChain masked = grammar_chain(greedy, grammar, false);
      EXPECT_EQ(generate(fast, seed), generate(masked, seed)) << grammar;
    }
  }
}

TEST(GrammarSampling, DrawsAreAllowedAndReproducible) {
  SamplerOptions options;
  options.seed = 1234;
  const char* grammar = kGrammars[2];
  SamplerChain a = grammar_chain(options, grammar, true);
  SamplerChain b = grammar_chain(options, grammar, true);
  const std::vector<TokenId> first = generate(a, 9);
  EXPECT_EQ(first, generate(b, 9));
  a.reset();
  EXPECT_EQ(first, generate(a, 9));
  // Every token was accepted by the grammar (generate() checks accept), and the text parses.
  auto vocab = test_vocabulary();
  std::string text;
  for (TokenId t : first) text += t == kEog ? "" : std::string(vocab->piece(t));
  EXPECT_EQ(text.front(), '{');
}

TEST(GrammarSampling, EndOfGenerationOnlyWhereComplete) {
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  SamplerChain chain = grammar_chain(greedy, "root ::= \"ab\"+\n", true);
  std::vector<float> logits(static_cast<size_t>(chain.vocab_size()), 0.0f);
  logits[kEog] = 10.0f;
  logits[4 + 'a' - 1] = 1.0f;
  auto first = chain.sample(logits);  // EOG is not allowed yet: "a"
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 4 + 'a' - 1);
  ASSERT_TRUE(chain.accept(*first).ok());
  EXPECT_FALSE(chain.accept(kEog).ok());
  ASSERT_TRUE(chain.accept(4 + 'b' - 1).ok());
  auto second = chain.sample(logits);  // complete now: EOG wins
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, kEog);
}

TEST(GrammarSampling, NoAllowedTokenIsAnError) {
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  // No token of this vocabulary starts a "c" (every code point has its lead byte in the test
  // vocabulary, and a grammar must not ask for what no UTF-8 can hold).
  auto vocab = GrammarVocabulary::build({"a", "b", "ab"}, {false, false, false});
  auto chain = SamplerChain::create(greedy, vocab->size());
  ASSERT_TRUE(chain.ok());
  ASSERT_TRUE(chain->set_grammar(compile("root ::= \"c\"\n"), vocab).ok());
  std::vector<float> logits(static_cast<size_t>(chain->vocab_size()), 0.0f);
  auto token = chain->sample(logits);
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.error().message().find("allows no token"), std::string::npos);
}

}  // namespace
}  // namespace sinter
