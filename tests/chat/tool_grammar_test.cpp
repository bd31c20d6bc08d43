// Tool-call grammars: for every family, the grammar built with the JSON-schema converter's
// argument rules (src/sample) compiles, accepts the family's documented call text from its
// trigger on, and rejects a tool that was not offered or arguments outside the schema.
#include "chat/tools/tool_grammar.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chat/tools/xml_parameters.h"
#include "sample/grammar/grammar_matcher.h"
#include "sample/json_schema_grammar.h"
#include "support/grammar_walk.h"

namespace sinter::chat::tools {
namespace {

using Json = nlohmann::ordered_json;

const char* kWeatherSchema =
    R"({"type": "object", "properties": {"location": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
        "required": ["location"], "additionalProperties": false})";
const char* kTimeSchema =
    R"({"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"],
        "additionalProperties": false})";

// The grammar for get_weather and get_time in `format`, argument rules included.
std::string tool_grammar(const ToolFormat& format, const ToolGrammarOptions& options,
                         ToolGrammar* built = nullptr) {
  std::string rules;
  std::vector<ToolGrammarTool> tools;
  int i = 0;
  for (auto [name, schema] : {std::pair{"get_weather", kWeatherSchema}, std::pair{"get_time", kTimeSchema}}) {
    auto args = json_schema_to_grammar(Json::parse(schema));
    EXPECT_TRUE(args.ok()) << args.error().message();
    std::string prefix = "args" + std::to_string(i++) + "-";
    auto renamed = prefix_gbnf_rules(*args, prefix);
    EXPECT_TRUE(renamed.ok());
    rules += *renamed;
    tools.push_back({name, prefix + "root", {}});
    if (format.family == ToolFamily::kQwenXml) {
      auto parameters = xml_parameters(Json::parse(schema), prefix + "p", rules);
      EXPECT_TRUE(parameters.ok()) << parameters.error().message();
      tools.back().parameters = *parameters;
    }
  }
  auto grammar = build_tool_grammar(format, tools, options);
  EXPECT_TRUE(grammar.ok()) << grammar.error().message();
  if (built) *built = *grammar;
  return grammar->gbnf + rules;
}

// Whether the grammar accepts `text` whole.
bool accepts(const std::string& gbnf, const std::string& text) {
  auto compiled = compile_grammar(gbnf);
  EXPECT_TRUE(compiled.ok()) << compiled.error().message() << "\n" << gbnf;
  if (!compiled.ok()) return false;
  GrammarMatcher matcher(*compiled);
  return matcher.accept(text).ok() && matcher.can_complete();
}

struct GrammarCase {
  const char* family;
  const char* accepted;  // a call text from the trigger on
  bool parallel = false;
};

const std::string kW = R"({"location": "Paris", "unit": "celsius"})";
const std::string kT = R"({"timezone": "UTC"})";

class FamilyGrammar : public ::testing::TestWithParam<GrammarCase> {};

TEST_P(FamilyGrammar, AcceptsTheDocumentedCallAndRejectsOthers) {
  const GrammarCase& c = GetParam();
  ToolFormat format = tool_format_for(*tool_family_from_name(c.family));
  ToolGrammarOptions options;
  options.parallel_calls = c.parallel;
  ToolGrammar built;
  std::string gbnf = tool_grammar(format, options, &built);
  std::string text = c.accepted;
  EXPECT_TRUE(accepts(gbnf, text)) << c.family << ": " << text << "\n" << gbnf;
  // Every accepted text starts at a trigger (the lazy grammar is matched from the trigger on).
  if (built.lazy) {
    bool at_trigger = false;
    for (const ToolTrigger& trigger : built.triggers) at_trigger |= text.starts_with(trigger.word);
    EXPECT_TRUE(at_trigger) << c.family;
  }
  // A tool that was not offered, and arguments the schema forbids.
  std::string unknown = text;
  unknown.replace(unknown.find("get_"), 4, "set_");
  EXPECT_FALSE(accepts(gbnf, unknown)) << c.family;
  std::string bad_args = text;
  size_t at = bad_args.find("Paris\"");
  if (at == std::string::npos) at = bad_args.find("UTC\"");
  ASSERT_NE(at, std::string::npos);
  bad_args.replace(bad_args.find('"', at), 1, "\", \"extra\": 1");
  EXPECT_FALSE(accepts(gbnf, bad_args)) << c.family << ": " << bad_args;
}

INSTANTIATE_TEST_SUITE_P(
    Families, FamilyGrammar,
    ::testing::Values(
        GrammarCase{"hermes",
                    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": "
                    "\"Paris\"}}\n</tool_call>"},
        GrammarCase{
            "hermes",
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}</tool_call>\n"
            "<tool_call>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}</tool_call>",
            true},
        GrammarCase{"llama3", "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}"},
        GrammarCase{"llama3",
                    "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}"},
        GrammarCase{"mistral",
                    "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]"},
        GrammarCase{
            "mistral-args",
            "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"Paris\"}[TOOL_CALLS]get_time[ARGS]{\"timezone\": "
            "\"UTC\"}",
            true},
        GrammarCase{"granite",
                    "<|tool_call|>[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}]"},
        GrammarCase{"phi4-mini",
                    "<|tool_call|>{\"name\": \"get_weather\", \"arguments\": {\"location\": "
                    "\"Paris\"}}<|/tool_call|>"},
        GrammarCase{"phi4-mini",
                    "functools[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]"},
        GrammarCase{"deepseek-r1",
                    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"
                    "\"location\": "
                    "\"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
        GrammarCase{"deepseek-v3.1",
                    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\": "
                    "\"UTC\"}<｜tool▁call▁end｜>"},
        GrammarCase{"gpt-oss",
                    " to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Paris\"}"},
        GrammarCase{"gpt-oss",
                    " to=functions.get_time<|channel|>commentary json<|message|>{\"timezone\": \"UTC\"}"},
        GrammarCase{
            "generic",
            "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}}"}));

TEST(ToolGrammar, GenericAllowsAResponseUnlessACallIsRequired) {
  ToolFormat format = tool_format_for(ToolFamily::kGeneric);
  std::string response = R"({"response": "Hello \"there\"\n"})";
  EXPECT_TRUE(accepts(tool_grammar(format, {}), response));
  ToolGrammarOptions required;
  required.required = true;
  EXPECT_FALSE(accepts(tool_grammar(format, required), response));
}

TEST(ToolGrammar, RequiredCallsMayFollowReasoning) {
  ToolFormat format = tool_format_for(ToolFamily::kHermes);
  format.reasoning_open = "<think>";
  format.reasoning_close = "</think>";
  ToolGrammarOptions options;
  options.required = true;
  ToolGrammar built;
  std::string gbnf = tool_grammar(format, options, &built);
  EXPECT_FALSE(built.lazy);
  std::string call =
      "<tool_call>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}</tool_call>";
  EXPECT_TRUE(accepts(gbnf, call));
  EXPECT_TRUE(accepts(gbnf, "<think>\nThe time, in UTC.\n</think>\n\n" + call));
  EXPECT_FALSE(accepts(gbnf, "Sure! " + call));
  options.reasoning_open_in_prompt = true;
  EXPECT_TRUE(accepts(tool_grammar(format, options), "The time.\n</think>\n\n" + call));
}

TEST(ToolGrammar, RequiredGptOssMayReasonFirst) {
  ToolGrammarOptions options;
  options.required = true;
  std::string gbnf = tool_grammar(tool_format_for(ToolFamily::kGptOss), options);
  EXPECT_TRUE(
      accepts(gbnf,
              "<|channel|>analysis<|message|>Need the time.<|end|><|start|>assistant<|channel|>commentary "
              "to=functions.get_time <|constrain|>json<|message|>{\"timezone\": \"UTC\"}"));
}

// Qwen3-Coder / Qwen 3.5's XML calls: the parameters in the schema's order, required ones
// present, strings as text and the rest as JSON of their schema, with or without <tool_call>.
TEST(ToolGrammar, QwenXmlCallsFollowTheSchema) {
  ToolGrammar built;
  ToolGrammarOptions options;
  options.parallel_calls = true;
  const std::string gbnf = tool_grammar(tool_format_for(ToolFamily::kQwenXml), options, &built);
  const std::string weather =
      "<tool_call>\n<function=get_weather>\n<parameter=location>\nSaint-Denis, La R\u00e9union\n(the "
      "island)\n"
      "</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>";
  EXPECT_TRUE(accepts(gbnf, weather)) << gbnf;
  EXPECT_TRUE(accepts(gbnf, weather + "\n" + weather));
  EXPECT_TRUE(accepts(gbnf, "<function=get_time>\n<parameter=timezone>\nUTC\n</parameter>\n</function>"));
  EXPECT_TRUE(accepts(gbnf,
                      "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n"
                      "</function>\n</tool_call>"));  // the optional unit left out
  // A required parameter missing, a value outside its enum, parameters out of order, an
  // unknown parameter or tool.
  EXPECT_FALSE(accepts(gbnf, "<tool_call>\n<function=get_time>\n</function>\n</tool_call>"));
  EXPECT_FALSE(accepts(gbnf,
                       "<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n"
                       "<parameter=unit>\nkelvin\n</parameter>\n</function>"));
  EXPECT_FALSE(accepts(gbnf,
                       "<function=get_weather>\n<parameter=unit>\ncelsius\n</parameter>\n"
                       "<parameter=location>\nParis\n</parameter>\n</function>"));
  EXPECT_FALSE(accepts(gbnf,
                       "<function=get_time>\n<parameter=timezone>\nUTC\n</parameter>\n"
                       "<parameter=city>\nParis\n</parameter>\n</function>"));
  EXPECT_FALSE(accepts(gbnf, "<function=set_time>\n<parameter=timezone>\nUTC\n</parameter>\n</function>"));
  ASSERT_TRUE(built.lazy);
  ASSERT_EQ(built.triggers.size(), 2u);
  EXPECT_EQ(built.triggers[0].word, "<tool_call>");
  EXPECT_EQ(built.triggers[1].word, "<function=");
}

// Every family's grammar, lazy or required, one call or several, stays far below the grammar
// limits (sample/grammar/grammar_budget.h) on random walks through it.
TEST(ToolGrammar, EveryFamilyStaysFarBelowTheGrammarLimits) {
  const GrammarLimits limits;
  const auto vocab = sinter::testing::walk_vocabulary();
  for (const char* name : {"generic", "hermes", "qwen3-coder", "llama3", "mistral", "mistral-args", "granite",
                           "phi4-mini", "deepseek-r1", "deepseek-v3.1", "gpt-oss"}) {
    ToolFormat format = tool_format_for(*tool_family_from_name(name));
    format.reasoning_open = "<think>";
    format.reasoning_close = "</think>";
    for (const bool parallel : {false, true}) {
      for (const bool required : {false, true}) {
        ToolGrammarOptions options;
        options.parallel_calls = parallel;
        options.required = required;
        auto compiled = compile_grammar(tool_grammar(format, options), limits);
        ASSERT_TRUE(compiled.ok()) << name << ": " << compiled.error().message();
        auto cost = sinter::testing::walk_grammar(*compiled, *vocab, 11, 4, 64);
        ASSERT_TRUE(cost.ok()) << name << ": " << cost.error().message();
        EXPECT_LE(cost->peak_states * 16, limits.max_stacks) << name << " parallel " << parallel;
        EXPECT_LE(cost->peak_work * 256, limits.max_step_work) << name << " parallel " << parallel;
      }
    }
  }
}

TEST(ToolGrammar, LiteralsEscapeNamesAndRulesArePrefixed) {
  EXPECT_EQ(gbnf_literal("a\"b\\c\n"), R"("a\"b\\c\n")");
  auto renamed =
      prefix_gbnf_rules("root ::= item{2,3} \"root\" [a-z] # root\nitem ::= [^\\]x] | root\n", "p-");
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(*renamed, "p-root ::= p-item{2,3} \"root\" [a-z] # root\np-item ::= [^\\]x] | p-root\n");
  EXPECT_FALSE(prefix_gbnf_rules("root ::= \"open", "p-").ok());
  std::vector<ToolGrammarTool> spaced{{"get weather", "x", {}}};
  EXPECT_FALSE(build_tool_grammar(tool_format_for(ToolFamily::kMistralArgs), spaced).ok());
  EXPECT_FALSE(build_tool_grammar(tool_format_for(ToolFamily::kHermes), {}).ok());
}

}  // namespace
}  // namespace sinter::chat::tools
