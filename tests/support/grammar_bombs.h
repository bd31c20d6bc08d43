// Grammars that cost much work per character, for the tests of the grammar bounds
// (sample/grammar/grammar_budget.h) at the matcher and at the scheduler.
#pragma once

#include <string>

namespace sinter::testing {

// 300 alternatives "x" r_i, each r_i a way back to g: after "x", 300 different parses whose
// continuations expand into the same 300 alternatives, 90,000 expansion steps per character.
// Before the bounds this cost a fraction of a second per token, stalling every request of a pass.
inline std::string expansion_bomb() {
  std::string text = "root ::= g\ng ::= ";
  for (int i = 0; i < 300; ++i) text += (i ? " | " : "") + std::string("\"x\" r") + std::to_string(i);
  text += "\n";
  for (int i = 0; i < 300; ++i) text += "r" + std::to_string(i) + " ::= g | \"y\"\n";
  return text;
}

}  // namespace sinter::testing
