#include "server/chat_reply.h"

#include <mutex>
#include <random>

#include "chat/tools/tool_grammar.h"
#include "chat/tools/xml_parameters.h"
#include "core/json_parse.h"
#include "sample/json_schema_grammar.h"

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;
using namespace chat::tools;

// Ids unique per reply: "call_" + 9 alphanumerics + "_" (+ the call's index, added by the parser).
std::string call_id_prefix() {
  static std::mutex mutex;
  static std::mt19937_64 generator{std::random_device{}()};
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::lock_guard<std::mutex> lock(mutex);
  std::string id = "call_";
  for (int i = 0; i < 9; ++i) id += kAlphabet[generator() % (sizeof(kAlphabet) - 1)];
  return id + "_";
}

// The calls' grammar: each allowed tool's parameters through the schema converter, renamed so
// that the tools' rules live side by side, then the format's call syntax around them.
Status add_tool_grammar(const ChatToolOptions& request, const ToolFormat& format, const ParseOptions& parse,
                        ChatReplySetup& setup) {
  std::string rules;
  std::vector<ToolGrammarTool> tools;
  for (size_t i = 0; i < request.tools.size(); ++i) {
    const Json& function = request.tools[i]["function"];
    const std::string name = function["name"].get<std::string>();
    if (request.choice == ToolChoice::kNamed && name != request.named_tool) continue;
    auto arguments = json_schema_to_grammar(function["parameters"]);
    if (!arguments) {
      return make_error(ErrorCode::kInvalidArgument, "tools[", i,
                        "].function.parameters: ", arguments.error().message());
    }
    const std::string prefix = concat("args", i, "-");
    SINTER_ASSIGN(std::string renamed, prefix_gbnf_rules(*arguments, prefix));
    rules += renamed;
    tools.push_back({name, prefix + "root", {}});
    if (format.family == ToolFamily::kQwenXml) {
      auto parameters = xml_parameters(function["parameters"], concat("args", i, "-"), rules);
      if (!parameters) {
        return make_error(ErrorCode::kInvalidArgument, "tools[", i,
                          "].function.parameters: ", parameters.error().message());
      }
      tools.back().parameters = std::move(*parameters);
    }
  }
  ToolGrammarOptions options;
  options.parallel_calls = request.parallel_calls;
  options.required = request.choice == ToolChoice::kRequired || request.choice == ToolChoice::kNamed;
  options.reasoning_open_in_prompt = parse.reasoning_open_in_prompt;
  auto grammar = build_tool_grammar(format, tools, options);
  if (!grammar) return make_error(ErrorCode::kInvalidArgument, "tools: ", grammar.error().message());
  setup.grammar = grammar->gbnf + rules;
  if (grammar->lazy) {
    for (const ToolTrigger& trigger : grammar->triggers)
      setup.triggers.words.push_back({trigger.word, trigger.at_start});
    // A call written while thinking is not one: triggers count after the reasoning block.
    if (parse.reasoning && format.family != ToolFamily::kGptOss) {
      setup.triggers.skip_open = format.reasoning_open;
      setup.triggers.skip_close = format.reasoning_close;
      setup.triggers.skip_open_in_prompt = parse.reasoning_open_in_prompt;
    }
  }
  return ok_status();
}

}  // namespace

bool template_shows_tools(std::string_view template_source) {
  return template_source.find("tools") != std::string_view::npos ||
         template_source.find(".Tools") != std::string_view::npos;
}

bool template_can_think(const ToolFormat& format) {
  return format.family == ToolFamily::kGptOss || !format.reasoning_open.empty();
}

Result<ChatReplySetup> setup_chat_reply(const ChatToolOptions& request, const std::string& template_source,
                                        const std::string& prompt) {
  ChatReplySetup setup;
  setup.format = detect_tool_format(template_source);
  ParseOptions& parse = setup.options;
  parse.reasoning = request.separate_reasoning && request.think.value_or(true);
  parse.reasoning_open_in_prompt = prompt_opens_reasoning(setup.format, prompt);
  parse.tool_calls = request.calls_tools();
  parse.call_id_prefix = call_id_prefix();
  if (setup.format.family == ToolFamily::kQwenXml && parse.tool_calls) {
    // Its argument values are bare text: the parser reads them by the parameters' types.
    for (const Json& tool : request.tools) {
      const Json& function = tool["function"];
      parse.parameter_types[function["name"].get<std::string>()] = parameter_types(function["parameters"]);
    }
  }
  const bool gpt_oss = setup.format.family == ToolFamily::kGptOss;
  setup.parse = parse.tool_calls || gpt_oss || (parse.reasoning && template_can_think(setup.format));
  setup.render_special = parse.tool_calls || gpt_oss;
  if (parse.tool_calls) {
    // Thinking off: the grammar gives no room for a reasoning block.
    ToolFormat grammar_format = setup.format;
    if (!parse.reasoning) {
      grammar_format.reasoning_open.clear();
      grammar_format.reasoning_close.clear();
    }
    SINTER_TRY(add_tool_grammar(request, grammar_format, parse, setup));
  }
  return setup;
}

ChatRenderOptions chat_render_options(const ChatToolOptions& request) {
  ChatRenderOptions options;
  if (request.calls_tools()) options.tools = request.tools;
  options.extra_context = request.template_kwargs;
  options.think = request.think;
  options.think_level = request.think_level;
  return options;
}

namespace {

// What a generic-family model is told when its template does not show the tools.
std::string generic_tools_prompt(const ChatToolOptions& request) {
  std::string text = "You can call these tools (JSON schemas of their arguments):\n";
  for (const Json& tool : request.tools) {
    if (request.choice == ToolChoice::kNamed && tool["function"]["name"] != request.named_tool) continue;
    text += tool["function"].dump() + "\n";
  }
  const std::string call = request.parallel_calls
                               ? "{\"tool_calls\": [{\"name\": \"...\", \"arguments\": {...}}, ...]}"
                               : "{\"tool_call\": {\"name\": \"...\", \"arguments\": {...}}}";
  const bool required = request.choice == ToolChoice::kRequired || request.choice == ToolChoice::kNamed;
  text += "Reply with one JSON object: " + call + " to call " + (request.parallel_calls ? "tools" : "a tool");
  if (!required) text += ", or {\"response\": \"...\"} to answer";
  return text + ".";
}

}  // namespace

Result<RenderedChat> render_chat_with_tools(const ServedModel& model, const chat::Json& messages,
                                            const std::optional<std::string>& template_source,
                                            const ChatToolOptions& request) {
  const ChatRenderOptions options = chat_render_options(request);
  SINTER_ASSIGN(RenderedChat rendered, render_chat_turn(model, messages, template_source, options));
  if (!request.calls_tools() || template_shows_tools(rendered.template_source) ||
      detect_tool_format(rendered.template_source).family != ToolFamily::kGeneric) {
    return rendered;
  }
  chat::Json described = messages;
  const std::string text = generic_tools_prompt(request);
  if (!described.empty() && described[0].value("role", "") == "system" &&
      described[0]["content"].is_string()) {
    described[0]["content"] = described[0]["content"].get<std::string>() + "\n\n" + text;
  } else {
    described.insert(described.begin(), chat::Json{{"role", "system"}, {"content", text}});
  }
  return render_chat_turn(model, described, template_source, options);
}

Status check_thinking(const ChatToolOptions& request, const ChatReplySetup& setup, const std::string& model) {
  if (request.think.value_or(false) && !template_can_think(setup.format))
    return make_error(ErrorCode::kInvalidArgument, "\"", model, "\" does not support thinking");
  return ok_status();
}

void apply_reply_setup(const ChatReplySetup& setup, GenerationOptions& options) {
  if (!setup.grammar.empty()) {
    options.grammar = setup.grammar;
    options.grammar_triggers = setup.triggers;
  }
  if (setup.render_special) options.render_special = true;
}

Json openai_tool_calls(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (const ToolCall& call : calls) {
    out.push_back(Json{{"id", call.id},
                       {"type", "function"},
                       {"function", Json{{"name", call.name}, {"arguments", call.arguments}}}});
  }
  return out;
}

Json openai_tool_call_deltas(const std::vector<ToolCallDelta>& deltas) {
  Json out = Json::array();
  for (const ToolCallDelta& delta : deltas) {
    Json entry{{"index", delta.index}};
    Json function = Json::object();
    if (!delta.id.empty()) {
      entry["id"] = delta.id;
      entry["type"] = "function";
    }
    if (!delta.name.empty()) function["name"] = delta.name;
    function["arguments"] = delta.arguments;
    entry["function"] = std::move(function);
    out.push_back(std::move(entry));
  }
  return out;
}

Json ollama_tool_calls(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    auto parsed = parse_json<Json>(calls[i].arguments);
    Json arguments = parsed && parsed->is_object() ? std::move(parsed).value() : Json::object();
    out.push_back(Json{{"id", calls[i].id},
                       {"function", Json{{"index", i}, {"name", calls[i].name}, {"arguments", arguments}}}});
  }
  return out;
}

}  // namespace sinter::server
