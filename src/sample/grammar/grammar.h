// A parsed GBNF grammar (llama.cpp's grammar syntax), as the matcher walks it.
//
// Every rule is a run of elements in one flat array: its alternatives one after the other, each
// ended by kAlt, the last by kEnd. An alternative is a sequence of terminals (character classes)
// and rule references. A character class is one kChar / kCharNot / kCharAny element followed by
// its further members as kCharAlt, each optionally followed by a kCharUpper that makes the member
// before it a range:
//
//   rule  x ::= "ab" | [^a-c\n] y |          (flat, starting at rule_start[x])
//   kChar 'a', kChar 'b', kAlt,
//   kCharNot 'a', kCharUpper 'c', kCharAlt '\n', kRuleRef y, kAlt,
//   kEnd                                      (the empty alternative)
//
// Repetitions (?, *, +, {m,n}) and groups are rewritten by the parser into generated rules, so
// the matcher only ever sees sequences, alternatives and references. Positions into `elements`
// (uint32_t) are what the matcher's stacks hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sinter {

enum class GrammarElementType : uint8_t {
  kEnd,        // end of the rule's last alternative
  kAlt,        // end of an alternative that another follows
  kRuleRef,    // value: the rule's index
  kChar,       // value: a code point; starts a class that matches its members
  kCharNot,    // starts a class that matches every code point except its members
  kCharAny,    // `.`: any code point (a class of its own)
  kCharAlt,    // value: a further member of the class before it
  kCharUpper,  // value: the inclusive upper end of a range whose lower end is the element before
};

struct GrammarElement {
  GrammarElementType type;
  uint32_t value;
};

struct Grammar {
  std::vector<GrammarElement> elements;  // all rules, flat
  std::vector<uint32_t> rule_start;      // [rule] → index of its first element
  std::vector<std::string> rule_names;   // [rule] → name; generated rules are "name_N"
  uint32_t root = 0;                     // the rule named `root`
};

// True for the elements that end an alternative.
inline bool ends_alternative(const GrammarElement& e) {
  return e.type == GrammarElementType::kEnd || e.type == GrammarElementType::kAlt;
}

// True for the first element of a character class (what a matcher's stack top points at).
inline bool starts_char_class(const GrammarElement& e) {
  return e.type == GrammarElementType::kChar || e.type == GrammarElementType::kCharNot ||
         e.type == GrammarElementType::kCharAny;
}

}  // namespace sinter
