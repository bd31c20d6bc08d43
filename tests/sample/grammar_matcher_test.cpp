// The incremental matcher: tokens of several characters, UTF-8 sequences split across tokens,
// completion, copies, and the limits that bound an ambiguous grammar.
#include "sample/grammar/grammar_matcher.h"

#include <gtest/gtest.h>

#include <string>

namespace sinter {
namespace {

GrammarMatcher matcher_for(const std::string& text, const GrammarLimits& limits = {}) {
  auto compiled = compile_grammar(text, limits);
  EXPECT_TRUE(compiled.ok()) << compiled.error().message();
  return GrammarMatcher(*compiled);
}

bool allows(const GrammarMatcher& m, std::string_view bytes) {
  auto r = m.allows(bytes);
  EXPECT_TRUE(r.ok());
  return r.ok() && *r;
}

TEST(GrammarMatcher, MultiCharacterTokens) {
  GrammarMatcher m = matcher_for("root ::= \"hello\" \" \" (\"world\" | \"there\") \"!\"\n");
  EXPECT_FALSE(m.can_complete());
  EXPECT_TRUE(allows(m, "hel"));
  EXPECT_TRUE(allows(m, "hello wor"));
  EXPECT_FALSE(allows(m, "help"));
  EXPECT_FALSE(allows(m, ""));
  ASSERT_TRUE(m.accept("hell").ok());
  EXPECT_FALSE(m.accept("x").ok());  // rejected, state unchanged
  ASSERT_TRUE(m.accept("o th").ok());
  EXPECT_FALSE(allows(m, "ere!!"));  // past the end of the grammar
  ASSERT_TRUE(m.accept("ere!").ok());
  EXPECT_TRUE(m.can_complete());
  EXPECT_TRUE(m.finished());
  EXPECT_FALSE(allows(m, "a"));
}

TEST(GrammarMatcher, PartialUtf8AcrossTokens) {
  GrammarMatcher m = matcher_for("root ::= [é-ë]+ \"x\"\n");  // é = C3 A9
  EXPECT_TRUE(allows(m, "\xc3"));                             // could still become é..ë
  EXPECT_FALSE(allows(m, "\xc4"));                            // U+0100.. cannot
  EXPECT_FALSE(allows(m, "\xa9"));  // a continuation byte cannot start a token's text
  EXPECT_FALSE(allows(m, "\xe2"));  // 3-byte sequences are ≥ U+0800
  ASSERT_TRUE(m.accept("\xc3").ok());
  EXPECT_EQ(m.partial().remaining, 1);
  EXPECT_FALSE(allows(m, "a"));     // the carried sequence needs a continuation byte
  EXPECT_FALSE(allows(m, "\xa8"));  // è is outside the class
  EXPECT_TRUE(allows(m, "\xa9\xc3\xaa"));
  ASSERT_TRUE(m.accept("\xa9\xc3").ok());
  ASSERT_TRUE(m.accept("\xab").ok());
  EXPECT_FALSE(m.can_complete());
  ASSERT_TRUE(m.accept("x").ok());
  EXPECT_TRUE(m.finished());
}

TEST(GrammarMatcher, NegatedClassesArePessimisticAboutPartials) {
  // As llama.cpp: C3 could become é (allowed) or à (excluded); the partial token is refused,
  // the whole character is not.
  GrammarMatcher m = matcher_for("root ::= [^à]\n");
  EXPECT_FALSE(allows(m, "\xc3"));
  EXPECT_TRUE(allows(m, "\xc3\xa9"));
  EXPECT_FALSE(allows(m, "\xc3\xa0"));
}

TEST(GrammarMatcher, NulEndsATokensText) {
  GrammarMatcher m = matcher_for("root ::= \"ab\" .*\n");
  EXPECT_TRUE(allows(m, std::string("ab\0\x01", 4)));
  EXPECT_FALSE(allows(m, std::string("\0ab", 3)));
}

TEST(GrammarMatcher, CompletionAndContinuation) {
  GrammarMatcher m = matcher_for("root ::= [0-9]+\n");
  EXPECT_FALSE(m.can_complete());
  ASSERT_TRUE(m.accept("12").ok());
  EXPECT_TRUE(m.can_complete());
  EXPECT_FALSE(m.finished());
  GrammarMatcher copy = m;  // independent
  ASSERT_TRUE(copy.accept("3").ok());
  EXPECT_FALSE(m.accept("a").ok());
  m.reset();
  EXPECT_FALSE(m.can_complete());
}

TEST(GrammarMatcher, AmbiguityIsBounded) {
  GrammarLimits limits;
  limits.max_stacks = 8;
  // Every 'a' can end or continue many rules in different ways: the parses multiply (parses that
  // can no longer differ merge, so the continuations differ).
  auto compiled = compile_grammar(
      "root ::= x*\nx ::= \"a\" | \"a\" \"b\" | \"a\" \"a\" \"c\" | \"a\" \"a\" \"a\" \"d\" | y\ny ::= "
      "\"a\"+ \"e\"\n",
      limits);
  ASSERT_TRUE(compiled.ok());
  GrammarMatcher m(*compiled);
  Status status = ok_status();
  for (int i = 0; i < 20 && status.ok(); ++i) status = m.accept("a");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("too ambiguous"), std::string::npos);
}

}  // namespace
}  // namespace sinter
