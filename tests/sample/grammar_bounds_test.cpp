// Bounds on what a grammar may cost per token (sample/grammar/grammar_budget.h): parses that can
// no longer differ merge, the parses alive are capped, the rules expanded per character are
// capped, and each sampling step has a budget of work and of time. Each bomb here is a small
// grammar within every limit of the parser that cost seconds per token before these bounds.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "sample/grammar/grammar_mask.h"
#include "sample/grammar/grammar_matcher.h"
#include "sample/json_schema_grammar.h"
#include "sample/sampler_chain.h"
#include "support/grammar_bombs.h"
#include "support/grammar_walk.h"
#include "support/test_paths.h"

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

TEST(GrammarBounds, ParsesThatContinueAlikeExpandOnce) {
  // 500 different classes that all match "a" and end their alternative: after an "a", 500
  // parses continue identically, and the continuation is expanded once, not 500 times.
  auto grammar = compile(repeated_choice(500, [](int i) { return "[a-" + rare_char(i) + "]"; }));
  GrammarMatcher m(grammar);
  ASSERT_EQ(m.stacks().size(), 501u);  // the classes are different parses, and the end
  for (int i = 0; i < 3; ++i) {
    GrammarBudget budget(grammar->limits);
    ASSERT_TRUE(m.accept("a", budget).ok());
    EXPECT_EQ(m.stacks().size(), 501u);
    // 501 stacks checked, one continuation expanded into 501 (and the rule references on the way).
    EXPECT_LE(budget.used(), 3u * 501u);
    EXPECT_EQ(budget.peak_states(), 501u);
  }
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

TEST(GrammarBounds, ExpansionPerCharacterIsBounded) {
  GrammarMatcher m(compile(testing::expansion_bomb()));
  EXPECT_EQ(m.stacks().size(), 300u);
  const Status status = m.accept("x");
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(
      contains(status.error().message(), "expanding the rules after one character took more than 65536"))
      << status.error().message();
  EXPECT_TRUE(contains(status.error().message(), "simplify it"));
}

TEST(GrammarBounds, DeepStacksCountTheirLength) {
  // Each "(" nests one rule deeper; copying a parse costs its depth, and so does its work count.
  auto grammar = compile("root ::= \"(\" root \")\" | \"x\"\n");
  GrammarMatcher m(grammar);
  GrammarBudget shallow(grammar->limits);
  ASSERT_TRUE(m.accept("(", shallow).ok());
  for (int i = 0; i < 640; ++i) ASSERT_TRUE(m.accept("(").ok());
  GrammarBudget deep(grammar->limits);
  ASSERT_TRUE(m.accept("(", deep).ok());
  EXPECT_GE(deep.used(), 5 * shallow.used());
  EXPECT_LE(deep.used(), 50 * shallow.used());
}

// Every character keeps 200 parses alive (any character, then one of 200 rare ones): the mask
// checks all of them at every node of the vocabulary's trie.
const std::string kWideGrammar = repeated_choice(200, [](int i) { return ". \"" + rare_char(i) + "\""; });

TEST(GrammarBounds, WorkPerStepIsBounded) {
  const auto vocab = testing::walk_vocabulary();
  std::vector<uint8_t> mask;
  GrammarMaskScratch scratch;
  // Within the default budget, the mask costs this much:
  GrammarMatcher wide(compile(kWideGrammar));
  GrammarBudget unbounded(wide.grammar().limits);
  ASSERT_TRUE(grammar_token_mask(wide, *vocab, mask, scratch, unbounded).ok());
  EXPECT_GT(unbounded.used(), 20'000u);
  EXPECT_EQ(unbounded.peak_states(), 200u);
  // A budget below that is an error saying so, from the mask and from a sampler chain.
  GrammarLimits limits;
  limits.max_step_work = 20'000;
  auto grammar = compile(kWideGrammar, limits);
  GrammarMatcher m(grammar);
  const Status status = grammar_token_mask(m, *vocab, mask, scratch);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.error().message(), "needs more than 20000 steps of grammar work"))
      << status.error().message();
  EXPECT_TRUE(contains(status.error().message(), "simplify the grammar"));

  SamplerOptions options;
  options.temperature = 0.0f;
  auto chain = SamplerChain::create(options, vocab->size());
  ASSERT_TRUE(chain.ok());
  ASSERT_TRUE(chain->set_grammar(grammar, vocab).ok());
  chain->set_grammar_fast_path(false);  // the mask runs
  const std::vector<float> logits(static_cast<size_t>(vocab->size()), 0.0f);
  auto token = chain->sample(logits);
  ASSERT_FALSE(token.ok());
  EXPECT_TRUE(contains(token.error().message(), "steps of grammar work")) << token.error().message();
}

TEST(GrammarBounds, StepTimeIsABackstop) {
  const auto vocab = testing::walk_vocabulary();
  std::vector<uint8_t> mask;
  GrammarMaskScratch scratch;
  GrammarLimits limits;
  limits.max_step_cpu_time = std::chrono::nanoseconds(1);  // spent by the second look at the clock
  GrammarMatcher m(compile(kWideGrammar, limits));
  const Status status = grammar_token_mask(m, *vocab, mask, scratch);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.error().message(), "ms of processor time; simplify the grammar"))
      << status.error().message();
  limits.max_step_cpu_time = std::chrono::nanoseconds(0);  // none
  GrammarMatcher untimed(compile(kWideGrammar, limits));
  EXPECT_TRUE(grammar_token_mask(untimed, *vocab, mask, scratch).ok());
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The limits leave real grammars a wide margin: random walks through every grammar and schema of
// the corpora peak far below them (the tool-call grammars: tests/chat/tool_grammar_test.cpp).
TEST(GrammarBounds, RealGrammarsStayFarBelowTheLimits) {
  const GrammarLimits limits;
  const auto vocab = testing::walk_vocabulary();
  std::vector<std::pair<std::string, std::string>> grammars;  // name, GBNF
  const std::string root = testing::source_dir();
  for (const char* folder : {"/tests/sample/data/grammars", "/fuzz/corpus/gbnf"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root + folder)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("bomb-") || name.starts_with("bad-")) continue;  // hostile on purpose
      const std::string text = read_file(entry.path());
      grammars.emplace_back(name, text.substr(0, text.find("\n%%\n")));
    }
  }
  for (const char* folder : {"/tests/sample/data/schemas", "/fuzz/corpus/json_schema"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root + folder)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("bomb-") || name.starts_with("bad-")) continue;
      auto gbnf = json_schema_text_to_grammar(read_file(entry.path()));
      if (gbnf.ok()) grammars.emplace_back(name, *gbnf);
    }
  }
  EXPECT_GE(grammars.size(), 70u);
  for (const auto& [name, text] : grammars) {
    auto compiled = compile_grammar(text, limits);
    ASSERT_TRUE(compiled.ok()) << name << ": " << compiled.error().message();
    auto cost = testing::walk_grammar(*compiled, *vocab, 7, 4, 48);
    ASSERT_TRUE(cost.ok()) << name << ": " << cost.error().message();
    EXPECT_LE(cost->peak_states * 16, limits.max_stacks) << name;
    EXPECT_LE(cost->peak_work * 256, limits.max_step_work) << name;
  }
}

}  // namespace
}  // namespace sinter
