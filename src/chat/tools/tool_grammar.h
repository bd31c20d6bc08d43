// GBNF grammars for tool calls: "a call of this family to one of these tools", for the lazy
// grammar that the sampler starts at a trigger (or from the first token when a call is required).
//
// The arguments of each tool come as a GBNF rule the caller defines, normally the JSON-schema
// converter's grammar for the tool's `parameters`, renamed so that several tools' rules can live
// in one grammar:
//
//   std::string rules;
//   std::vector<ToolGrammarTool> tools;
//   for (size_t i = 0; i < n; ++i) {
//     SINTER_ASSIGN(std::string args, json_schema_to_grammar(parameters[i]));   // src/sample
//     std::string prefix = "args" + std::to_string(i) + "-";
//     SINTER_ASSIGN(std::string renamed, prefix_gbnf_rules(args, prefix));
//     rules += renamed;
//     tools.push_back({names[i], prefix + "root"});
//   }
//   SINTER_ASSIGN(ToolGrammar grammar, build_tool_grammar(format, tools, {}));
//   grammar.gbnf += rules;   // `root` is the call; grammar.triggers start it when grammar.lazy
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tools/tool_format.h"
#include "sample/json_schema/gbnf_rules.h"
#include "sinter/result.h"

namespace sinter::chat::tools {

// A parameter of a tool, for formats that write each argument apart (Qwen3-Coder's XML).
struct ToolGrammarParameter {
  std::string name;
  // A rule (defined by the caller) whose sentences are the value's JSON; empty for a string
  // parameter, whose value is written as bare text.
  std::string value_rule;
  bool required = false;
};

struct ToolGrammarTool {
  std::string name;            // the function's name, as the model must write it
  std::string arguments_rule;  // a rule (defined by the caller) whose sentences are the arguments JSON
  // The XML format's parameters, in the order the schema lists them (it writes them so).
  std::vector<ToolGrammarParameter> parameters;
};

struct ToolGrammarOptions {
  bool parallel_calls = false;  // several calls in one reply
  // tool_choice "required" or a named tool: the reply must be a call, constrained from its first
  // token (a reasoning block may come first where the format has one).
  bool required = false;
  bool reasoning_open_in_prompt = false;  // with `required`: the reply starts inside the reasoning
  std::string rule_prefix = "tool-";      // the prefix of every rule defined here except `root`
};

struct ToolGrammar {
  std::string gbnf;  // defines `root` and rules starting with rule_prefix; append the argument rules
  // Lazy: off until the reply contains a trigger, then matched from the trigger's first byte on.
  // Otherwise the grammar holds from the first token (generic family, `required`).
  bool lazy = true;
  std::vector<ToolTrigger> triggers;
};

// The grammar of one reply's tool call(s) in the family's format. Errors: no tools, or a name the
// family's format cannot carry (Mistral's [ARGS] form and gpt-oss's recipient need a plain name).
Result<ToolGrammar> build_tool_grammar(const ToolFormat& format, std::span<const ToolGrammarTool> tools,
                                       const ToolGrammarOptions& options = {});

// `gbnf` with every rule name N (definitions and references) renamed prefix + N; literals,
// character classes, repetition counts and comments are left alone. Errors: an unterminated
// literal or class.
Result<std::string> prefix_gbnf_rules(std::string_view gbnf, std::string_view prefix);

// `text` as a GBNF string literal, quotes included (the schema converter's escaping).
using json_schema::gbnf_literal;

}  // namespace sinter::chat::tools
