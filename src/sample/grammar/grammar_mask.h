// Which tokens a grammar allows next, for one sequence: per token (the sampler's fast path) or
// for the whole vocabulary at once (the mask), and advancing the matcher over a chosen token.
//
// The mask walks the matcher's stacks down the vocabulary's trie depth first: the stacks are
// advanced once per character of a shared prefix, not once per token, and a subtree is skipped
// as soon as no stack survives its prefix (or its bytes are invalid UTF-8). Cost: the trie nodes
// reachable under the grammar, times the stack work per character; a permissive grammar (`.*`)
// visits the whole trie (about the vocabulary's total bytes), a narrow one only a few nodes.
//
// Each call takes the GrammarBudget of its sampling step (a node visited is one unit of work);
// the overloads without one make a fresh budget from the grammar's limits.
#pragma once

#include <cstdint>
#include <vector>

#include "core/token.h"
#include "sample/grammar/grammar_matcher.h"
#include "sample/grammar/token_trie.h"
#include "sinter/result.h"

namespace sinter {

// Reusable buffers of the trie walk (one per sequence, so that masks reuse their memory).
struct GrammarMaskScratch {
  struct Frame {
    uint32_t node;
    uint32_t next_child;
    uint32_t stacks;  // index into `stack_sets`
    Utf8State partial;
    bool carried;
    bool owns_stacks;
  };
  std::vector<Frame> frames;
  std::vector<std::vector<GrammarStack>> stack_sets;
};

// allowed[id] = 1 when the grammar allows token id next, else 0; resized to the vocabulary.
Status grammar_token_mask(const GrammarMatcher& matcher, const GrammarVocabulary& vocab,
                          std::vector<uint8_t>& allowed, GrammarMaskScratch& scratch, GrammarBudget& budget);
Status grammar_token_mask(const GrammarMatcher& matcher, const GrammarVocabulary& vocab,
                          std::vector<uint8_t>& allowed, GrammarMaskScratch& scratch);

// Whether the grammar allows token `id` next (end of generation: where it can be complete).
Result<bool> grammar_allows_token(const GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id,
                                  GrammarBudget& budget);
Result<bool> grammar_allows_token(const GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id);

// Advances the matcher over token `id`; a token the grammar does not allow is an error.
Status grammar_accept_token(GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id,
                            GrammarBudget& budget);
Status grammar_accept_token(GrammarMatcher& matcher, const GrammarVocabulary& vocab, TokenId id);

}  // namespace sinter
