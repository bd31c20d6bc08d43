// The GBNF of each family's tool-call syntax (the same shapes the parsers read; docs/TOOL_CALLS.md).
#include "chat/tools/tool_grammar.h"

#include "chat/tools/markers.h"

namespace sinter::chat::tools {
namespace {

// Writes `name ::= body` lines, every rule name carrying the caller's prefix.
class RuleWriter {
 public:
  explicit RuleWriter(std::string prefix) : prefix_(std::move(prefix)) {}

  std::string name(std::string_view rule) const { return prefix_ + std::string(rule); }
  void add(std::string_view rule, std::string_view body) {
    text_ += rule == "root" ? std::string("root") : name(rule);
    text_ += " ::= ";
    text_ += body;
    text_ += '\n';
  }
  std::string take() { return std::move(text_); }

 private:
  std::string prefix_;
  std::string text_;
};

// Concatenation by appending (GCC 12 warns falsely on "literal" + std::string temporaries).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

bool plain_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// One or several of `item`, separated by `separator` (a GBNF expression).
std::string repeated(const std::string& item, const std::string& separator, bool parallel) {
  return parallel ? item + " (" + separator + " " + item + ")*" : item;
}

// Text up to the closing tag `close`: no byte sequence close[0] close[1] inside (an
// approximation that keeps the rule small: "</" cannot appear in Qwen's thinking).
std::string reasoning_body(std::string_view close) {
  auto excluded = [](char c) {
    std::string cls = "[^";
    if (c == ']' || c == '\\' || c == '^') cls += '\\';
    cls += c;
    cls += ']';
    return cls;
  };
  std::string body = "(";
  body.append(excluded(close[0])).append(" | ").append(gbnf_literal(close.substr(0, 1)));
  body.append(" ").append(excluded(close[1])).append(")*");
  return body;
}

}  // namespace

Result<ToolGrammar> build_tool_grammar(const ToolFormat& format, std::span<const ToolGrammarTool> tools,
                                       const ToolGrammarOptions& options) {
  if (tools.empty()) return Error(ErrorCode::kInvalidArgument, "a tool-call grammar needs at least one tool");
  for (const ToolGrammarTool& tool : tools) {
    if (tool.name.empty() || tool.arguments_rule.empty()) {
      return Error(ErrorCode::kInvalidArgument, "every tool needs a name and an arguments rule");
    }
    bool needs_plain = format.family == ToolFamily::kMistralArgs || format.family == ToolFamily::kGptOss ||
                       format.family == ToolFamily::kDeepSeekR1 || format.family == ToolFamily::kDeepSeekV31;
    if (needs_plain && !plain_name(tool.name)) {
      return make_error(ErrorCode::kInvalidArgument, "tool name '", tool.name, "' cannot be written in the ",
                        tool_family_name(format.family), " format (letters, digits, '_', '-', '.')");
    }
  }
  RuleWriter w(options.rule_prefix);
  const std::string ws = w.name("ws");
  // llama.cpp's whitespace between JSON tokens: nothing, a space, or up to two newlines and an indent.
  w.add("ws", "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}");
  auto key = [&](std::string_view k) {
    return cat(gbnf_literal(cat("\"", k, "\"")), " ", ws, " \":\" ", ws);
  };

  // {"name": "NAME", "arguments": ARGS} for each tool.
  const bool llama = format.family == ToolFamily::kLlama3;
  std::string objects;
  for (size_t i = 0; i < tools.size(); ++i) {
    std::string body = cat("\"{\" ", ws, " ");
    if (llama)
      body += cat("(", key("type"), " ", gbnf_literal("\"function\""), " ", ws, " \",\" ", ws, ")? ");
    body += cat(key("name"), " ", gbnf_literal(cat("\"", tools[i].name, "\"")), " ", ws, " \",\" ", ws, " ",
                key(llama ? "parameters" : "arguments"), " ", tools[i].arguments_rule, " ", ws, " \"}\"");
    w.add("object-" + std::to_string(i), body);
    objects += (i ? " | " : "") + w.name("object-" + std::to_string(i));
  }
  w.add("object", objects);
  const std::string object = w.name("object");
  const std::string object_list = "\"[\" " + ws + " " +
                                  repeated(object, ws + " \",\" " + ws, options.parallel_calls) + " " + ws +
                                  " \"]\"";

  // Each tool's name followed by its arguments, in a family's own framing.
  auto named = [&](std::string_view rule, auto&& one) {
    std::string alternatives;
    for (size_t i = 0; i < tools.size(); ++i) {
      if (i) alternatives += " | ";
      alternatives.append("(").append(one(tools[i])).append(")");
    }
    w.add(rule, alternatives);
    return w.name(rule);
  };

  std::string calls;  // the call(s) from the trigger on
  std::vector<ToolTrigger> triggers = format.triggers;
  bool lazy = !options.required;
  switch (format.family) {
    case ToolFamily::kHermes: {
      w.add("hermes", gbnf_literal(kHermesOpen) + " " + ws + " " + object + " " + ws + " " +
                          gbnf_literal(kHermesClose));
      calls = repeated(w.name("hermes"), ws, options.parallel_calls);
      break;
    }
    case ToolFamily::kQwenXml: {
      // A value written as text holds no "</" (the rule stays small; the closing tag follows).
      w.add("xml-text", "([^<] | \"<\" [^/])*");
      std::string function = named("xml-function", [&](const ToolGrammarTool& t) {
        std::string body = gbnf_literal(cat(kXmlFunctionOpen, t.name, ">\n"));
        for (const ToolGrammarParameter& p : t.parameters) {
          std::string value = p.value_rule.empty() ? w.name("xml-text") : p.value_rule;
          std::string one = cat("(", gbnf_literal(cat(kXmlParameterOpen, p.name, ">\n")), " ", value, " ",
                                gbnf_literal(cat("\n", kXmlParameterClose, "\n")), ")");
          body += cat(" ", one, p.required ? "" : "?");
        }
        return cat(body, " ", gbnf_literal(kXmlFunctionClose));
      });
      w.add("xml-call", cat(gbnf_literal(kHermesOpen), " \"\\n\"? ", function, " \"\\n\"? ",
                            gbnf_literal(kHermesClose), " | ", function));
      calls = repeated(w.name("xml-call"), ws, options.parallel_calls);
      break;
    }
    case ToolFamily::kLlama3: {
      std::string alternatives = repeated(object, "\";\"? " + ws, options.parallel_calls);
      if (format.python_tag)
        alternatives = "(" + alternatives + ") | " + gbnf_literal(kPythonTag) + " " + object;
      calls = alternatives;
      if (!format.python_tag)
        std::erase_if(triggers, [](const ToolTrigger& t) { return t.word == kPythonTag; });
      break;
    }
    case ToolFamily::kMistral: calls = gbnf_literal(kMistralToolCalls) + " " + ws + " " + object_list; break;
    case ToolFamily::kMistralArgs: {
      std::string call = named("mistral-call", [&](const ToolGrammarTool& t) {
        return gbnf_literal(t.name) + " " + gbnf_literal(kMistralArgsMarker) + " " + t.arguments_rule;
      });
      calls = repeated(gbnf_literal(kMistralToolCalls) + " " + call, "", options.parallel_calls);
      break;
    }
    case ToolFamily::kGranite: calls = gbnf_literal(kGraniteToolCall) + " " + ws + " " + object_list; break;
    case ToolFamily::kPhi4Mini: {
      w.add("phi-tagged", gbnf_literal(kGraniteToolCall) + " " + ws + " " + object + " " + ws + " " +
                              gbnf_literal(kPhi4ToolCallEnd));
      calls = "(" + repeated(w.name("phi-tagged"), ws, options.parallel_calls) + ") | \"functools\" " +
              object_list;
      break;
    }
    case ToolFamily::kDeepSeekR1:
    case ToolFamily::kDeepSeekV31: {
      bool r1 = format.family == ToolFamily::kDeepSeekR1;
      std::string call = named("deepseek-call", [&](const ToolGrammarTool& t) {
        if (r1) {
          return gbnf_literal(std::string(kDeepSeekCallBegin) + "function" + std::string(kDeepSeekSep) +
                              t.name + "\n```json\n") +
                 " " + t.arguments_rule + " " +
                 gbnf_literal(std::string("\n```") + std::string(kDeepSeekCallEnd));
        }
        return gbnf_literal(std::string(kDeepSeekCallBegin) + t.name + std::string(kDeepSeekSep)) + " " +
               t.arguments_rule + " " + gbnf_literal(kDeepSeekCallEnd);
      });
      std::string run = repeated(call, ws, options.parallel_calls) + " (" + ws + " " +
                        gbnf_literal(kDeepSeekCallsEnd) + ")?";
      calls = gbnf_literal(kDeepSeekCallsBegin) + " " + ws + " " + run + " | " + run;
      break;
    }
    case ToolFamily::kGptOss: {
      // After the name: " <|constrain|>json" (recipient in the channel) or "<|channel|>commentary
      // json" (recipient before the channel).
      w.add("harmony-header",
            "(\" \" [^<]*)? (\"<|channel|>\" [a-z]+ (\" \" [^<]*)?)? (\"<|constrain|>\" [a-z]+)?");
      std::string call = named("harmony-call", [&](const ToolGrammarTool& t) {
        return gbnf_literal(t.name) + " " + w.name("harmony-header") + " " + gbnf_literal(kHarmonyMessage) +
               " " + t.arguments_rule;
      });
      // One call per reply: the call ends the turn (<|call|> is an end-of-generation token).
      calls = gbnf_literal(kHarmonyToFunctions) + " " + call;
      if (options.required) {
        w.add("harmony-text", "([^<] | \"<\" [^|])*");
        calls = "(\"<|channel|>analysis<|message|>\" " + w.name("harmony-text") +
                " \"<|end|><|start|>assistant\")? \"<|channel|>commentary\" " + calls;
      }
      break;
    }
    case ToolFamily::kGeneric: {
      lazy = false;
      w.add("string",
            "\"\\\"\" ([^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4}))* "
            "\"\\\"\"");
      std::string call_choice =
          options.parallel_calls ? key("tool_calls") + " " + object_list : key("tool_call") + " " + object;
      std::string choices = call_choice;
      if (!options.required) choices = "(" + call_choice + ") | " + key("response") + " " + w.name("string");
      calls = "\"{\" " + ws + " (" + choices + ") " + ws + " \"}\"";
      triggers.clear();
      break;
    }
  }
  w.add("calls", calls);
  std::string root = w.name("calls");
  if (!lazy && format.family != ToolFamily::kGptOss && !format.reasoning_open.empty() &&
      !format.reasoning_close.empty() && format.reasoning_close.size() >= 2) {
    // A required call may follow the reasoning block (or the rest of one the prompt opened).
    w.add("reasoning-body", reasoning_body(format.reasoning_close));
    std::string block = w.name("reasoning-body") + " " + gbnf_literal(format.reasoning_close) + " " + ws;
    root = options.reasoning_open_in_prompt
               ? block + " " + root
               : "(" + gbnf_literal(format.reasoning_open) + " " + block + ")? " + root;
  }
  w.add("root", root);
  ToolGrammar grammar;
  grammar.gbnf = w.take();
  grammar.lazy = lazy;
  if (lazy) grammar.triggers = std::move(triggers);
  return grammar;
}

}  // namespace sinter::chat::tools
