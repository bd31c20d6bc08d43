// Parser of llama.cpp's GBNF grammar syntax (grammars/README.md in llama.cpp):
//
//   root   ::= object                 # comments run to the end of the line
//   object ::= "{" ws ( pair ( "," ws pair )* )? "}"
//   pair   ::= [a-z]+ ":" ws [0-9]{1,3}
//   ws     ::= [ \t\n]*
//
// Rules `name ::= alternatives` (names of letters, digits and '-'; a rule ends at a newline
// outside parentheses), alternation `|`, groups `( )`, repetition `?` `*` `+` `{m}` `{m,}`
// `{m,n}`, string literals and character classes with escapes (\n \r \t \\ \" \[ \] \xHH \uHHHH
// \UHHHHHHHH), ranges and negation `[^...]`, any character `.`; `root` is the start rule. A rule
// defined twice keeps its last definition (as llama.cpp). Not supported: llama.cpp's token
// references `<...>` / `!<...>` (an error saying so).
//
// The text is outside input (an HTTP request): every error is a value whose message names the
// line and column ("grammar line 3, column 14: expected ')' ..."), and the work is bounded by
// GbnfLimits: text size, nesting depth, repetition counts and the size of the rewritten grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sample/grammar/grammar.h"
#include "sinter/result.h"

namespace sinter {

struct GbnfLimits {
  size_t max_text_bytes = size_t{1} << 20;
  size_t max_elements = size_t{1} << 20;  // of the rewritten grammar (repetitions expanded)
  size_t max_rules = size_t{1} << 16;     // defined plus generated
  uint32_t max_repetition = 2000;         // m and n of {m,n} (llama.cpp's threshold)
  int max_nesting = 256;                  // nested parentheses
};

// Parses the grammar and checks it: every referenced rule is defined, `root` exists, no rule is
// left-recursive (directly or through rules that can match the empty string).
Result<Grammar> parse_gbnf(std::string_view text, const GbnfLimits& limits = {});

}  // namespace sinter
