#include "sample/grammar/grammar_matcher.h"

#include <algorithm>
#include <utility>

#include "sample/grammar/canonical_positions.h"
#include "sample/grammar/gbnf_parser.h"

namespace sinter {
namespace {

using Type = GrammarElementType;

// Whether the class starting at `pos` matches code point `cp`.
bool class_matches(const std::vector<GrammarElement>& el, uint32_t pos, uint32_t cp) {
  if (el[pos].type == Type::kCharAny) return true;
  const bool positive = el[pos].type == Type::kChar;
  bool found = false;
  do {
    if (el[pos + 1].type == Type::kCharUpper) {
      found = found || (el[pos].value <= cp && cp <= el[pos + 1].value);
      pos += 2;
    } else {
      found = found || el[pos].value == cp;
      pos += 1;
    }
  } while (el[pos].type == Type::kCharAlt);
  return found == positive;
}

// The position just past the class starting at `pos`.
uint32_t class_end(const std::vector<GrammarElement>& el, uint32_t pos) {
  if (el[pos].type == Type::kCharAny) return pos + 1;
  do {
    pos += el[pos + 1].type == Type::kCharUpper ? 2 : 1;
  } while (el[pos].type == Type::kCharAlt);
  return pos;
}

// Buffers of the calls below, kept per thread: advance_stacks runs once per trie node of a mask,
// and fresh buffers each time were a good part of its cost.
struct Scratch {
  std::vector<GrammarStack> todo;           // expand()
  std::vector<GrammarStack> continuations;  // advance_stacks()
};

Scratch& scratch() {
  thread_local Scratch buffers;
  return buffers;
}

// Extra work units for copying `stack`: one per 64 entries (a deep stack costs its length to
// copy, and a unit should stay about the same time; a stack of real grammars is a few deep).
uint64_t copy_cost(const GrammarStack& stack) { return stack.size() / 64; }

Error too_many_states(const CompiledGrammar& g) {
  return make_error(ErrorCode::kInvalidArgument, "grammar: the grammar needs more than ", g.limits.max_stacks,
                    " parse states at this point (it is too ambiguous); simplify it");
}

// Expands rule references on top of `stack` until every top is a class (or the stack is empty),
// adding the results to `out`. `expanded` counts the stacks popped for the current character.
Status expand(const CompiledGrammar& g, GrammarStack stack, StackSet& out, GrammarBudget& budget,
              size_t& expanded) {
  const std::vector<GrammarElement>& el = g.grammar.elements;
  std::vector<GrammarStack>& todo = scratch().todo;
  todo.clear();
  todo.push_back(std::move(stack));
  while (!todo.empty()) {
    GrammarStack s = std::move(todo.back());
    todo.pop_back();
    if (++expanded > g.limits.max_expansion) {
      return make_error(ErrorCode::kInvalidArgument,
                        "grammar: expanding the rules after one character took more than ",
                        g.limits.max_expansion, " steps (the grammar is too ambiguous); simplify it");
    }
    if (!budget.spend(1 + copy_cost(s))) return budget.exceeded();
    if (s.empty() || el[s.back()].type != Type::kRuleRef) {
      if (out.insert(std::move(s)) && out.size() > g.limits.max_stacks) return too_many_states(g);
      continue;
    }
    const uint32_t pos = s.back();
    s.pop_back();
    if (!ends_alternative(el[pos + 1])) s.push_back(g.canonical[pos + 1]);  // the rest of this alternative
    if (s.size() >= g.limits.max_stack_depth) {
      return make_error(ErrorCode::kInvalidArgument, "grammar: rules nested deeper than ",
                        g.limits.max_stack_depth);
    }
    // One stack per distinct alternative of the referenced rule (an empty one adds nothing).
    for (const uint32_t start : g.alternatives[el[pos].value]) {
      GrammarStack next = s;
      if (start != kEmptyAlternative) next.push_back(start);
      todo.push_back(std::move(next));
    }
  }
  return ok_status();
}

}  // namespace

Utf8Step utf8_step(Utf8State& state, uint8_t byte, bool carried) {
  if (state.remaining < 0) return Utf8Step::kInvalid;
  if (state.remaining > 0) {
    if (carried && (byte >> 6) != 2) {
      state = {0, -1};
      return Utf8Step::kInvalid;
    }
    state.value = (state.value << 6) + (byte & 0x3Fu);
    --state.remaining;
    return state.remaining == 0 ? Utf8Step::kCodePoint : Utf8Step::kNeedMore;
  }
  // Length by the high nibble: 0xxx one byte, 10xx invalid as a lead, 110x two, 1110 three, 1111 four.
  static constexpr int kLength[16] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4};
  const int remaining = kLength[byte >> 4] - 1;
  if (remaining < 0) {
    state = {0, -1};
    return Utf8Step::kInvalid;
  }
  state.value = byte & ((1u << (7 - remaining)) - 1);
  state.remaining = remaining;
  return remaining == 0 ? Utf8Step::kCodePoint : Utf8Step::kNeedMore;
}

bool partial_matches(const Grammar& grammar, const GrammarStack& stack, const Utf8State& partial) {
  const int n = partial.remaining;
  // Invalid bytes, or a 7-bit character split over two bytes (overlong): nothing can match.
  if (n < 0 || (n == 1 && partial.value < 2)) return false;
  // The code points the sequence can still become: [low, high], without overlong forms.
  uint32_t low = partial.value << (6 * n);
  const uint32_t high = low | ((1u << (6 * n)) - 1);
  if (low == 0 && n == 2) low = 1u << 11;
  if (low == 0 && n == 3) low = 1u << 16;
  const std::vector<GrammarElement>& el = grammar.elements;
  uint32_t pos = stack.back();
  if (el[pos].type == Type::kCharAny) return true;
  // A positive class: some member overlaps. A negated class: no member overlaps (conservative,
  // as llama.cpp: [^é] rejects a partial that could still become è).
  const bool positive = el[pos].type == Type::kChar;
  do {
    if (el[pos + 1].type == Type::kCharUpper) {
      if (el[pos].value <= high && low <= el[pos + 1].value) return positive;
      pos += 2;
    } else {
      if (low <= el[pos].value && el[pos].value <= high) return positive;
      pos += 1;
    }
  } while (el[pos].type == Type::kCharAlt);
  return !positive;
}

Status advance_stacks(const CompiledGrammar& grammar, const std::vector<GrammarStack>& stacks, uint32_t cp,
                      std::vector<GrammarStack>& out, GrammarBudget& budget) {
  const std::vector<GrammarElement>& el = grammar.grammar.elements;
  // The stacks past the character, each once: parses often continue alike (alternatives that
  // end here), and a continuation is expanded once however many parses reach it.
  std::vector<GrammarStack>& continuations = scratch().continuations;
  StackSet unique_continuations(continuations);
  for (const GrammarStack& s : stacks) {
    if (!budget.spend(1)) return budget.exceeded();
    if (s.empty() || !class_matches(el, s.back(), cp)) continue;
    if (!budget.spend(copy_cost(s))) return budget.exceeded();
    GrammarStack next(s.begin(), s.end() - 1);
    const uint32_t after = class_end(el, s.back());
    if (!ends_alternative(el[after])) next.push_back(grammar.canonical[after]);
    unique_continuations.insert(std::move(next));
  }
  StackSet result(out);
  size_t expanded = 0;
  for (GrammarStack& next : continuations)
    SINTER_TRY(expand(grammar, std::move(next), result, budget, expanded));
  budget.note_states(out.size());
  return ok_status();
}

Result<std::shared_ptr<const CompiledGrammar>> compile_grammar(std::string_view gbnf_text,
                                                               const GrammarLimits& limits) {
  SINTER_ASSIGN(Grammar grammar, parse_gbnf(gbnf_text));
  auto compiled = std::make_shared<CompiledGrammar>();
  compiled->grammar = std::move(grammar);
  compiled->limits = limits;
  compiled->canonical = canonical_positions(compiled->grammar);
  compiled->alternatives = distinct_alternatives(compiled->grammar, compiled->canonical);
  GrammarBudget budget(limits);
  StackSet initial(compiled->initial_stacks);
  size_t expanded = 0;
  for (const uint32_t start : compiled->alternatives[compiled->grammar.root]) {
    GrammarStack stack;
    if (start != kEmptyAlternative) stack.push_back(start);
    SINTER_TRY(expand(*compiled, std::move(stack), initial, budget, expanded));
  }
  return std::shared_ptr<const CompiledGrammar>(std::move(compiled));
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)), stacks_(grammar_->initial_stacks) {}

void GrammarMatcher::reset() {
  stacks_ = grammar_->initial_stacks;
  partial_ = {};
}

bool GrammarMatcher::can_complete() const {
  return std::any_of(stacks_.begin(), stacks_.end(), [](const GrammarStack& s) { return s.empty(); });
}

bool GrammarMatcher::finished() const {
  return std::all_of(stacks_.begin(), stacks_.end(), [](const GrammarStack& s) { return s.empty(); });
}

Result<bool> GrammarMatcher::run(std::string_view bytes, std::vector<GrammarStack>& stacks,
                                 Utf8State& partial, GrammarBudget& budget) const {
  bytes = grammar_piece(bytes);
  if (bytes.empty()) return false;
  bool carried = partial.remaining > 0;
  std::vector<GrammarStack> next;
  for (const char c : bytes) {
    switch (utf8_step(partial, static_cast<uint8_t>(c), carried)) {
      case Utf8Step::kInvalid: return false;
      case Utf8Step::kNeedMore: break;
      case Utf8Step::kCodePoint:
        carried = false;
        SINTER_TRY(advance_stacks(*grammar_, stacks, partial.value, next, budget));
        stacks.swap(next);
        partial = {};
        if (stacks.empty()) return false;
        break;
    }
  }
  if (partial.remaining > 0) {
    return std::any_of(stacks.begin(), stacks.end(), [&](const GrammarStack& s) {
      return !s.empty() && partial_matches(grammar_->grammar, s, partial);
    });
  }
  return true;
}

Result<bool> GrammarMatcher::allows(std::string_view bytes) const {
  GrammarBudget budget(grammar_->limits);
  return allows(bytes, budget);
}

Result<bool> GrammarMatcher::allows(std::string_view bytes, GrammarBudget& budget) const {
  std::vector<GrammarStack> stacks = stacks_;
  Utf8State partial = partial_;
  return run(bytes, stacks, partial, budget);
}

Status GrammarMatcher::accept(std::string_view bytes) {
  GrammarBudget budget(grammar_->limits);
  return accept(bytes, budget);
}

Status GrammarMatcher::accept(std::string_view bytes, GrammarBudget& budget) {
  SINTER_ASSIGN(const bool accepted, try_accept(bytes, budget));
  if (!accepted)
    return make_error(ErrorCode::kInvalidArgument, "grammar: the token's text is not allowed here");
  return ok_status();
}

Result<bool> GrammarMatcher::try_accept(std::string_view bytes, GrammarBudget& budget) {
  std::vector<GrammarStack> stacks = stacks_;
  Utf8State partial = partial_;
  SINTER_ASSIGN(const bool allowed, run(bytes, stacks, partial, budget));
  if (!allowed) return false;
  stacks_ = std::move(stacks);
  partial_ = partial;
  return true;
}

}  // namespace sinter
