#include "sample/grammar/grammar_mask.h"

#include <algorithm>

namespace sinter {

Status grammar_token_mask(const GrammarMatcher& matcher, const GrammarVocabulary& vocab,
                          std::vector<uint8_t>& allowed, GrammarMaskScratch& scratch) {
  GrammarBudget budget(matcher.grammar().limits);
  return grammar_token_mask(matcher, vocab, allowed, scratch, budget);
}

Status grammar_token_mask(const GrammarMatcher& matcher, const GrammarVocabulary& vocab,
                          std::vector<uint8_t>& allowed, GrammarMaskScratch& scratch, GrammarBudget& budget) {
  allowed.assign(static_cast<size_t>(vocab.size()), 0);
  const bool complete = matcher.can_complete();
  for (TokenId id : vocab.end_of_generation_tokens()) allowed[static_cast<size_t>(id)] = complete ? 1 : 0;

  const std::vector<TokenTrie::Node>& nodes = vocab.trie().nodes();
  const std::vector<TokenId>& tokens = vocab.trie().tokens();
  const CompiledGrammar& grammar = matcher.grammar();
  // stack_sets[0..used) are live: one per frame whose prefix ended a character, and the start.
  size_t used = 1;
  if (scratch.stack_sets.empty()) scratch.stack_sets.emplace_back();
  scratch.stack_sets[0] = matcher.stacks();
  scratch.frames.clear();
  const Utf8State start = matcher.partial();
  scratch.frames.push_back({0, nodes[0].first_child, 0, start, start.remaining > 0, false});

  while (!scratch.frames.empty()) {
    GrammarMaskScratch::Frame& frame = scratch.frames.back();
    if (frame.next_child == TokenTrie::kNone) {
      if (frame.owns_stacks) --used;
      scratch.frames.pop_back();
      continue;
    }
    const uint32_t child = frame.next_child;
    frame.next_child = nodes[child].next_sibling;
    if (!budget.spend(1)) return budget.exceeded();

    Utf8State partial = frame.partial;
    bool carried = frame.carried;
    uint32_t stacks = frame.stacks;
    bool owns = false;
    const Utf8Step step = utf8_step(partial, nodes[child].byte, carried);
    if (step == Utf8Step::kInvalid) continue;  // every token below has invalid bytes
    if (step == Utf8Step::kCodePoint) {
      if (scratch.stack_sets.size() <= used) scratch.stack_sets.emplace_back();
      // `frame` may dangle after the push below; everything needed was read above.
      SINTER_TRY(advance_stacks(grammar, scratch.stack_sets[stacks], partial.value, scratch.stack_sets[used],
                                budget));
      if (scratch.stack_sets[used].empty()) continue;  // no parse survives this prefix
      stacks = static_cast<uint32_t>(used++);
      owns = true;
      partial = {};
      carried = false;
    }
    const TokenTrie::Node& node = nodes[child];
    if (node.tokens_end > node.tokens_begin) {
      const std::vector<GrammarStack>& set = scratch.stack_sets[stacks];
      const bool ok =
          partial.remaining == 0 || std::any_of(set.begin(), set.end(), [&](const GrammarStack& s) {
            return !s.empty() && partial_matches(grammar.grammar, s, partial);
          });
      if (ok) {
        for (uint32_t k = node.tokens_begin; k < node.tokens_end; ++k)
          allowed[static_cast<size_t>(tokens[k])] = 1;
      }
    }
    if (node.first_child == TokenTrie::kNone) {
      if (owns) --used;
      continue;
    }
    scratch.frames.push_back({child, node.first_child, stacks, partial, carried, owns});
  }
  return ok_status();
}

Result<bool> grammar_allows_token(const GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id) {
  GrammarBudget budget(matcher.grammar().limits);
  return grammar_allows_token(matcher, vocab, id, budget);
}

Result<bool> grammar_allows_token(const GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id,
                                  GrammarBudget& budget) {
  if (vocab.is_end_of_generation(id)) return matcher.can_complete();
  return matcher.allows(vocab.piece(id), budget);
}

Status grammar_accept_token(GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id) {
  GrammarBudget budget(matcher.grammar().limits);
  return grammar_accept_token(matcher, vocab, id, budget);
}

Status grammar_accept_token(GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id,
                            GrammarBudget& budget) {
  if (vocab.is_end_of_generation(id)) {
    if (matcher.can_complete()) return ok_status();
    return make_error(ErrorCode::kInvalidArgument, "grammar: end of generation (token ", id,
                      ") before the grammar is complete");
  }
  SINTER_ASSIGN(const bool accepted, matcher.try_accept(vocab.piece(id), budget));
  if (!accepted)
    return make_error(ErrorCode::kInvalidArgument, "grammar: token ", id, " is not allowed here");
  return ok_status();
}

}  // namespace sinter
