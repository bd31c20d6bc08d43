// Random walks through a grammar's language that record what each step cost (parses alive, work
// units): for tests that check real grammars stay far below GrammarLimits
// (sample/grammar/grammar_budget.h). Header-only: include it from a test that links sinter_sample.
#pragma once

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sample/grammar/grammar_mask.h"
#include "sample/grammar/grammar_matcher.h"

namespace sinter::testing {

struct GrammarWalkCost {
  size_t peak_states = 0;  // parses alive after a character
  uint64_t peak_work = 0;  // work units of one step (a mask over the vocabulary, or an accept)
  int steps = 0;
};

// Every byte 0x01..0xFF as a token, words of JSON and prose, UTF-8 whole and in pieces, and an
// end-of-generation token (id 0).
inline std::shared_ptr<const GrammarVocabulary> walk_vocabulary() {
  std::vector<std::string> pieces = {"</s>"};
  for (int b = 1; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
  for (const char* word :
       {"{\"",  "\": ",  "\":",  "\", \"", "\"}",       "},",          "}}",           "[{",
        "true", "false", "null", "12",     "345",       "0.5",         "-1",           "e+",
        " the", " a",    "name", "\"name", "arguments", "<tool_call>", "</tool_call>", "\n\n",
        "  ",   "é",     "\xc3", "中文",   "😀",         "\xf0\x9f"}) {
    pieces.push_back(word);
  }
  std::vector<bool> eog(pieces.size(), false);
  eog[0] = true;
  return GrammarVocabulary::build(std::move(pieces), std::move(eog));
}

// `walks` walks of up to `steps` tokens each, every token drawn among those the mask allows.
// A limit error ends the walk and is returned.
inline Result<GrammarWalkCost> walk_grammar(const std::shared_ptr<const CompiledGrammar>& grammar,
                                            const GrammarVocabulary& vocab, uint64_t seed, int walks,
                                            int steps) {
  GrammarWalkCost cost;
  cost.peak_states = grammar->initial_stacks.size();
  std::mt19937_64 rng(seed);
  GrammarMaskScratch scratch;
  std::vector<uint8_t> mask;
  std::vector<TokenId> allowed;
  for (int w = 0; w < walks; ++w) {
    GrammarMatcher matcher(grammar);
    for (int s = 0; s < steps; ++s) {
      GrammarBudget budget(grammar->limits);
      SINTER_TRY(grammar_token_mask(matcher, vocab, mask, scratch, budget));
      allowed.clear();
      for (TokenId id = 0; id < vocab.size(); ++id) {
        if (mask[static_cast<size_t>(id)] && !vocab.is_end_of_generation(id)) allowed.push_back(id);
      }
      if (allowed.empty()) break;
      const TokenId token = allowed[rng() % allowed.size()];
      SINTER_TRY(grammar_accept_token(matcher, vocab, token, budget));
      cost.peak_states = std::max(cost.peak_states, budget.peak_states());
      cost.peak_work = std::max(cost.peak_work, budget.used());
      ++cost.steps;
    }
  }
  return cost;
}

}  // namespace sinter::testing
