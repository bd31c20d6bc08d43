// GBNF parser: what it accepts (the rewritten grammar's language is checked through the
// matcher), and that every malformed grammar is an error naming line and column.
#include <gtest/gtest.h>

#include <string>

#include "sample/grammar/gbnf_parser.h"
#include "sample/grammar/grammar_matcher.h"

namespace sinter {
namespace {

std::string error_of(const std::string& text, const GbnfLimits& limits = {}) {
  auto grammar = parse_gbnf(text, limits);
  EXPECT_FALSE(grammar.ok()) << text;
  return grammar.ok() ? std::string() : grammar.error().message();
}

// Whether the whole of `text` is a sentence of the grammar.
bool matches(const std::string& grammar_text, const std::string& text) {
  auto compiled = compile_grammar(grammar_text);
  EXPECT_TRUE(compiled.ok()) << grammar_text << ": " << compiled.error().message();
  if (!compiled.ok()) return false;
  GrammarMatcher matcher(*compiled);
  if (!text.empty()) {
    auto allowed = matcher.allows(text);
    if (!allowed.ok() || !*allowed) return false;
    if (!matcher.accept(text).ok()) return false;
  }
  return matcher.can_complete() && matcher.partial().remaining == 0;
}

TEST(GbnfParser, AcceptsTheSyntax) {
  const char* text = R"(# a comment line
root ::= greeting ( " " name )+ "!"? # trailing comment
greeting ::= "hi" | "hello"
name ::= [A-Z] [a-z-]{1,5} |
  "\x41\u00e9\U0001F600\t\n\r\\\"\[\]"
other-rule2 ::= ( "a"
   | "b" )* . [^\]x] [\x00-\x1f]
)";
  auto grammar = parse_gbnf(text);
  ASSERT_TRUE(grammar.ok()) << grammar.error().message();
  EXPECT_EQ(grammar->rule_names[grammar->root], "root");
}

TEST(GbnfParser, Repetitions) {
  const char* g = "root ::= \"a\"{2,4} \"b\"{3} \"c\"{1,} \"d\"?\n";
  EXPECT_TRUE(matches(g, "aabbbc"));
  EXPECT_TRUE(matches(g, "aaaabbbcccd"));
  EXPECT_FALSE(matches(g, "abbbc"));
  EXPECT_FALSE(matches(g, "aaaaabbbc"));
  EXPECT_FALSE(matches(g, "aabbc"));
  EXPECT_FALSE(matches(g, "aabbb"));
  EXPECT_TRUE(matches("root ::= (\"ab\" | \"c\")* \"x\"{0}\n", "abcab"));
  EXPECT_TRUE(matches("root ::= \"ab\"+\n", "ababab"));
  EXPECT_FALSE(matches("root ::= \"ab\"+\n", "aba"));
  EXPECT_TRUE(matches("root ::= [0-9]{2,}\n", "12345"));
  EXPECT_FALSE(matches("root ::= [0-9]{2,}\n", "1"));
}

TEST(GbnfParser, ClassesAndEscapes) {
  EXPECT_TRUE(matches("root ::= [^a-c]\n", "d"));
  EXPECT_TRUE(matches("root ::= [^a-c]\n", "\n"));
  EXPECT_FALSE(matches("root ::= [^a-c]\n", "b"));
  EXPECT_TRUE(matches("root ::= [α-ω]+\n", "λόγος") == false);  // ό is outside α-ω
  EXPECT_TRUE(matches("root ::= [α-ω]+\n", "λογος"));
  EXPECT_TRUE(matches("root ::= [\\u4e00-\\u9fff]{2}\n", "中文"));
  EXPECT_TRUE(matches("root ::= \"\\U0001F600\"\n", "😀"));
  EXPECT_TRUE(matches("root ::= \"\\x41\\t\\\"\"\n", "A\t\""));
  EXPECT_TRUE(matches("root ::= [\\]\\[-]+\n", "][-"));
  EXPECT_TRUE(matches("root ::= . .\n", "é\n"));
  EXPECT_TRUE(matches("root ::= \"\"\n", ""));
}

TEST(GbnfParser, CharactersMustBeUnicodeScalarValues) {
  // Surrogates and values above U+10FFFF have no UTF-8 form: a grammar asking for one would make
  // the model write invalid UTF-8. Escapes and raw bytes alike; the position is the escape's.
  EXPECT_EQ(
      error_of("root ::= \"\\U0011FFFF\"\n"),
      "grammar line 1, column 11: the escape '\\U0011FFFF' is U+11FFFF, above U+10FFFF, the largest code "
      "point");
  EXPECT_EQ(error_of("root ::= \"ab\\uD800\"\n"),
            "grammar line 1, column 13: the escape '\\uD800' is U+D800, a UTF-16 surrogate, not a character");
  EXPECT_EQ(error_of("root ::= [a\\uDFFF]\n"),
            "grammar line 1, column 12: the escape '\\uDFFF' is U+DFFF, a UTF-16 surrogate, not a character");
  EXPECT_EQ(error_of("root ::= \"x\"\nr ::= [\\u0041-\\U0000DC00]\n"),
            "grammar line 2, column 15: the escape '\\U0000DC00' is U+DC00, a UTF-16 surrogate, not a "
            "character");
  EXPECT_EQ(
      error_of("root ::= [^\\UFFFFFFFF]\n"),
      "grammar line 1, column 12: the escape '\\UFFFFFFFF' is U+FFFFFFFF, above U+10FFFF, the largest code "
      "point");
  EXPECT_EQ(error_of("root ::= \"\xed\xa0\x80\"\n"),
            "grammar line 1, column 11: the bytes here decode to U+D800, a UTF-16 surrogate, not a character "
            "(the text is not valid UTF-8)");
  EXPECT_EQ(error_of("root ::= [\xf4\x90\x80\x80]\n"),
            "grammar line 1, column 11: the bytes here decode to U+110000, above U+10FFFF, the largest code "
            "point (the text is not valid UTF-8)");
  // The neighbours are characters; a range may span the surrogates (they only never match).
  EXPECT_TRUE(
      matches("root ::= \"\\U0010FFFF\\uD7FF\\uE000\"\n", "\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80"));
  EXPECT_TRUE(matches("root ::= [\\u0000-\\U0010FFFF]\n", "\xf4\x8f\xbf\xbf"));
}

TEST(GbnfParser, RulesSpanLinesInsideParentheses) {
  const char* g = "root ::= (\n  \"a\" |\n  \"b\"\n) c\nc ::= \"c\"\n";
  EXPECT_TRUE(matches(g, "ac"));
  EXPECT_TRUE(matches(g, "bc"));
  // Outside parentheses a rule may continue after '|' on the next line.
  EXPECT_TRUE(matches("root ::= \"a\" |\n  \"b\"\n", "b"));
}

TEST(GbnfParser, ErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("root ::= \"a\"\nb ::= (\"x\" \"y\"\n"),
            "grammar line 3, column 1: expected ')' to close the '(' of line 2, column 7, found the end of "
            "the grammar");
  EXPECT_EQ(error_of("root ::= foo\n"), "grammar line 1, column 10: undefined rule 'foo'");
  EXPECT_EQ(error_of("a ::= \"x\"\n"), "grammar: there is no rule named 'root' (the start rule)");
  EXPECT_EQ(error_of(""), "grammar: there is no rule named 'root' (the start rule)");
  EXPECT_EQ(error_of("root ::= \"abc\n"), "grammar line 1, column 10: unterminated string literal");
  EXPECT_EQ(error_of("root ::= [abc\n"), "grammar line 1, column 10: unterminated character class");
  EXPECT_EQ(error_of("root ::= \"\\q\"\n"), "grammar line 1, column 11: unknown escape '\\q'");
  EXPECT_EQ(error_of("root ::= \"\\x4\"\n"), "grammar line 1, column 11: expected 2 hex digits after '\\x'");
  EXPECT_EQ(error_of("root = \"a\"\n"),
            "grammar line 1, column 6: expected '::=' after the rule name 'root', found '='");
  EXPECT_EQ(error_of("root ::= * \"a\"\n"), "grammar line 1, column 10: expected an item before '*'");
  EXPECT_EQ(error_of("root ::= \"a\" )\n"),
            "grammar line 1, column 14: expected a line break or the end of the grammar after rule 'root', "
            "found ')'");
  EXPECT_EQ(error_of("root ::= \"a\"{3,2}\n"),
            "grammar line 1, column 13: repetition {3,2} has a maximum below its minimum");
  EXPECT_EQ(error_of("root ::= \"a\"{2001}\n"),
            "grammar line 1, column 13: repetition count above the limit of 2000");
  EXPECT_EQ(error_of("root ::= \"a\"{99999999999999999999999}\n"),
            "grammar line 1, column 13: repetition count above the limit of 2000");
  EXPECT_EQ(error_of("root ::= \"a\"{1\n"),
            "grammar line 1, column 15: expected ',' or '}' in the repetition, found a line break");
  EXPECT_EQ(error_of("root ::= []\n"), "grammar line 1, column 10: empty character class");
  EXPECT_EQ(error_of("root ::= é\n"),
            "grammar line 1, column 10: expected a line break or the end of the grammar after rule 'root', "
            "found '\xc3'");
  EXPECT_EQ(error_of("  \n::= \"a\"\n"), "grammar line 2, column 1: expected a rule name, found ':'");
  EXPECT_EQ(error_of("root ::= <[12]>\n"),
            "grammar line 1, column 10: token references (<...>) are not supported");
  EXPECT_EQ(error_of(std::string("root ::= \"a\0\"\n", 14)),
            "grammar line 1, column 12: unexpected NUL byte");
}

TEST(GbnfParser, LeftRecursionIsAnError) {
  EXPECT_EQ(error_of("root ::= root \"a\" | \"b\"\n"),
            "grammar line 1, column 1: rule 'root' is left-recursive (it can reach itself before matching "
            "any character)");
  // Through another rule that can be empty.
  EXPECT_NE(error_of("root ::= \"x\" expr\nexpr ::= opt expr \"+\" | \"1\"\nopt ::= \"-\"?\n")
                .find("'expr' is left-recursive"),
            std::string::npos);
  // Through a group and a nullable rule whose emptiness needs a fixed point.
  EXPECT_NE(error_of("root ::= (a b root)? \"z\"\na ::= b b\nb ::= \"\" | \"q\"\n").find("left-recursive"),
            std::string::npos);
  // Right recursion is fine.
  EXPECT_TRUE(matches("root ::= \"a\" root | \"b\"\n", "aaab"));
}

TEST(GbnfParser, HostileInputIsBounded) {
  // Repetitions are expanded: a long item repeated many times exceeds the element budget.
  const std::string repeated = "root ::= \"" + std::string(600, 'a') + "\"{2000}\n";
  EXPECT_NE(error_of(repeated).find("grows beyond"), std::string::npos);
  // Nested groups stay small (a group is one reference), and match.
  EXPECT_TRUE(compile_grammar("root ::= (((\"ab\"{1000}){1000}){1000})\n").ok());
  // Deep nesting.
  std::string deep = "root ::= " + std::string(1000, '(') + "\"a\"" + std::string(1000, ')') + "\n";
  EXPECT_NE(error_of(deep).find("nested deeper"), std::string::npos);
  GbnfLimits small;
  small.max_text_bytes = 16;
  EXPECT_NE(error_of("root ::= \"aaaaaaaaaaaaaaaa\"\n", small).find("more than the limit"),
            std::string::npos);
}

TEST(GbnfParser, LastDefinitionWins) {
  EXPECT_TRUE(matches("root ::= \"a\"\nroot ::= \"b\"\n", "b"));
  EXPECT_FALSE(matches("root ::= \"a\"\nroot ::= \"b\"\n", "a"));
}

}  // namespace
}  // namespace sinter
