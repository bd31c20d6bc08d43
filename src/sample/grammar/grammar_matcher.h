// The incremental matcher of one sequence against a grammar: a set of pushdown stacks over
// Unicode code points, advanced by the bytes of each accepted token.
//
// A stack is a list of positions in Grammar::elements, the top (back) always at the start of a
// character class; the empty stack means the grammar is complete along that path. Accepting a
// code point keeps the stacks whose top class matches it, moves past the class and expands rule
// references again until every top is a class (or the stack is empty). The set is the union over
// all ways the text so far can be parsed, duplicates removed.
//
// Tokens are bytes, not characters: a token may end inside a UTF-8 sequence. The matcher keeps
// the incomplete sequence (Utf8State) and finishes it with the next token's bytes. The decoding
// follows llama.cpp's exactly, so that the same tokens are allowed: the lead byte's high nibble
// gives the length (0x80..0xBF as a lead is invalid), continuation bytes of a sequence that began
// in the same token are not checked, those of a sequence carried over from an earlier token are,
// and a token that ends inside a sequence is allowed only when some character the sequence could
// still become matches a stack's top class. A NUL byte ends a token's text (llama.cpp reads token
// pieces as C strings).
//
// Copyable: a copy is an independent matcher (the grammar itself is shared and immutable). Work
// is bounded by GrammarLimits (sample/grammar/grammar_budget.h): the parses alive after a
// character, the rules expanded per character, and the work and time of one sampling step, so a
// hostile grammar gives an error, never a stall. Parses that can no longer differ are merged
// (canonical_positions.h, stack_set.h): equal alternatives cost what one does.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sample/grammar/grammar.h"
#include "sample/grammar/grammar_budget.h"
#include "sample/grammar/stack_set.h"
#include "sinter/result.h"

namespace sinter {

// The UTF-8 sequence in progress at the end of the bytes seen so far.
struct Utf8State {
  uint32_t value = 0;     // the bits decoded so far
  int32_t remaining = 0;  // continuation bytes still missing; 0: none pending; -1: invalid bytes
};

enum class Utf8Step { kNeedMore, kCodePoint, kInvalid };

// Feeds one byte (not NUL). On kCodePoint, state.value is the code point and state.remaining 0.
// `carried`: the sequence in progress began in an earlier token (its continuation bytes are
// checked). Once kInvalid, the state stays invalid.
Utf8Step utf8_step(Utf8State& state, uint8_t byte, bool carried);

// A grammar with the limits its matchers run under; built once, shared by every sequence.
struct CompiledGrammar {
  Grammar grammar;
  GrammarLimits limits;
  std::vector<uint32_t> canonical;  // [position] → the one pushed for it (canonical_positions.h)
  std::vector<std::vector<uint32_t>> alternatives;  // [rule] → its distinct alternatives' first positions
  std::vector<GrammarStack> initial_stacks;         // root's alternatives, expanded
};

// Parses GBNF text (see gbnf_parser.h) and expands the start rule once.
Result<std::shared_ptr<const CompiledGrammar>> compile_grammar(std::string_view gbnf_text,
                                                               const GrammarLimits& limits = {});

// The stacks after code point `cp` from `stacks`, each once, into `out` (cleared first; not
// `stacks`). The work is charged to `budget`.
Status advance_stacks(const CompiledGrammar& grammar, const std::vector<GrammarStack>& stacks, uint32_t cp,
                      std::vector<GrammarStack>& out, GrammarBudget& budget);

// True when some character that the incomplete sequence `partial` could still become matches
// the class on top of `stack` (non-empty). llama.cpp's rule, including its conservative answer
// for negated classes.
bool partial_matches(const Grammar& grammar, const GrammarStack& stack, const Utf8State& partial);

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Whether a token with these bytes is allowed now: all its complete characters match, and an
  // incomplete last sequence can still match. Empty bytes (or a leading NUL) are never allowed.
  // Errors only when a limit is exceeded. Without a budget, the call is a step of its own.
  Result<bool> allows(std::string_view bytes) const;
  Result<bool> allows(std::string_view bytes, GrammarBudget& budget) const;

  // Advances over a token's bytes. A token the grammar does not allow is an error, and the
  // matcher is left unchanged.
  Status accept(std::string_view bytes);
  Status accept(std::string_view bytes, GrammarBudget& budget);
  // The same, false for a token the grammar does not allow; errors only when a limit is exceeded.
  Result<bool> try_accept(std::string_view bytes, GrammarBudget& budget);

  // The grammar can end here (an end-of-generation token is allowed).
  bool can_complete() const;
  // The grammar has ended: nothing but the end of generation can follow.
  bool finished() const;

  const std::vector<GrammarStack>& stacks() const { return stacks_; }
  const Utf8State& partial() const { return partial_; }
  const CompiledGrammar& grammar() const { return *grammar_; }
  // Back to the state before the first token.
  void reset();

 private:
  // Runs the bytes over a copy of the state; false when some character is rejected.
  Result<bool> run(std::string_view bytes, std::vector<GrammarStack>& stacks, Utf8State& partial,
                   GrammarBudget& budget) const;

  std::shared_ptr<const CompiledGrammar> grammar_;
  std::vector<GrammarStack> stacks_;
  Utf8State partial_;
};

// A token's text as the grammar sees it: up to the first NUL byte.
inline std::string_view grammar_piece(std::string_view bytes) { return bytes.substr(0, bytes.find('\0')); }

}  // namespace sinter
