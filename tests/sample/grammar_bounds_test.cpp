// Bounds on what a grammar may cost per token: parses that can no longer differ merge, the parses
// alive are capped, and so are the rules expanded per character. Each bomb here is a small grammar
// within every limit of the parser that cost seconds per token before these bounds.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>

#include "sample/grammar/grammar_matcher.h"
#include "sample/json_schema_grammar.h"

namespace sinter {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// root ::= (a_0 | a_1 | ... | a_{n-1})*
std::string repeated_choice(int n, const std::function<std::string(int)>& alternative) {
  std::string text = "root ::= (";
  for (int i = 0; i < n; ++i) text += (i ? " | " : "") + alternative(i);
  return text + ")*\n";
}

// A GBNF escape of the code point U+0100 + i (a character no test token contains).
std::string rare_char(int i) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\u%04X", 0x100 + i);
  return buffer;
}

std::shared_ptr<const CompiledGrammar> compile(const std::string& text, const GrammarLimits& limits = {}) {
  auto compiled = compile_grammar(text, limits);
  EXPECT_TRUE(compiled.ok()) << compiled.error().message();
  return compiled.ok() ? *compiled : nullptr;
}

// 1000 equal alternatives: 6 KB of GBNF.
const std::string kEqualAlternatives = repeated_choice(1000, [](int) { return "\"x\""; });

TEST(GrammarBounds, EqualAlternativesMergeIntoOneParse) {
  GrammarMatcher m(compile(kEqualAlternatives));
  // One parse for "x" and one for the end; without merging, 1000 stacks that each expand into
  // 1000 again after every "x".
  EXPECT_LE(m.stacks().size(), 2u);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(m.accept("x").ok());
    EXPECT_LE(m.stacks().size(), 2u);
  }
  EXPECT_TRUE(m.can_complete());
}

TEST(GrammarBounds, SchemaPatternBombMerges) {
  std::string pattern = "^(x";
  for (int i = 1; i < 1000; ++i) pattern += "|x";
  pattern += ")*$";
  auto gbnf = json_schema_text_to_grammar(R"({"type": "string", "pattern": ")" + pattern + "\"}");
  ASSERT_TRUE(gbnf.ok()) << gbnf.error().message();
  GrammarMatcher m(compile(*gbnf));
  ASSERT_TRUE(m.accept("\"").ok());
  EXPECT_LE(m.stacks().size(), 3u);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(m.accept("x").ok());
    EXPECT_LE(m.stacks().size(), 3u);
  }
  ASSERT_TRUE(m.accept("\"").ok());
  EXPECT_TRUE(m.can_complete());
}

TEST(GrammarBounds, TooManyParsesIsAnErrorThatSaysSo) {
  // After "x", 2000 different parses (each waiting for its own character).
  std::string text = "root ::= \"x\" (";
  for (int i = 0; i < 2000; ++i) text += (i ? " | " : "") + std::string("\"y\" \"") + rare_char(i) + "\"";
  text += ")\n";
  GrammarMatcher m(compile(text));
  const auto before = m.stacks();
  const Status status = m.accept("x");
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.error().message(), "needs more than 1024 parse states at this point"))
      << status.error().message();
  EXPECT_TRUE(contains(status.error().message(), "simplify it"));
  EXPECT_EQ(m.stacks(), before);  // unchanged
}

// 300 alternatives "x" r_i, each r_i a way back to g: after "x", 300 different parses whose
// continuations expand into the same 300 alternatives: 90,000 expansion steps per character for
// 300 parses. The expansion per character is bounded (GrammarLimits::max_expansion).
std::string expansion_bomb() {
  std::string text = "root ::= g\ng ::= ";
  for (int i = 0; i < 300; ++i) text += (i ? " | " : "") + std::string("\"x\" r") + std::to_string(i);
  text += "\n";
  for (int i = 0; i < 300; ++i) text += "r" + std::to_string(i) + " ::= g | \"y\"\n";
  return text;
}

TEST(GrammarBounds, ExpansionPerCharacterIsBounded) {
  GrammarMatcher m(compile(expansion_bomb()));
  EXPECT_EQ(m.stacks().size(), 300u);
  const Status status = m.accept("x");
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(
      contains(status.error().message(), "expanding the rules after one character took more than 65536"))
      << status.error().message();
  EXPECT_TRUE(contains(status.error().message(), "simplify it"));
}

}  // namespace
}  // namespace sinter
