#include "server/tool_request.h"

#include "server/json_fields.h"

namespace sinter::server {
namespace {

// One entry of `tools` in the template's shape.
Result<Json> read_tool(const Json& tool, const std::string& where) {
  if (!tool.is_object())
    return make_error(ErrorCode::kInvalidArgument, where, " must be an object, got ", describe_json(tool));
  JsonFields fields(tool, where + ".");
  SINTER_ASSIGN(const auto type, fields.string("type"));
  if (type && *type != "function") {
    return make_error(ErrorCode::kInvalidArgument, where, ".type must be \"function\", got \"", *type, "\"");
  }
  SINTER_ASSIGN(const Json* function, fields.object("function"));
  if (function == nullptr)
    return make_error(ErrorCode::kInvalidArgument, where, ".function is required (an object)");
  JsonFields function_fields(*function, where + ".function.");
  SINTER_ASSIGN(const auto name, function_fields.string("name"));
  if (!name || name->empty())
    return make_error(ErrorCode::kInvalidArgument, where, ".function.name is required");
  SINTER_ASSIGN(const auto description, function_fields.string("description"));
  (void)description;
  SINTER_ASSIGN(const Json* parameters, function_fields.object("parameters"));
  Json out = tool;
  out["type"] = "function";
  if (parameters == nullptr)
    out["function"]["parameters"] = Json{{"type", "object"}, {"properties", Json::object()}};
  return out;
}

Result<Json> read_tools(const JsonFields& fields) {
  SINTER_ASSIGN(const Json* tools, fields.array("tools"));
  if (tools == nullptr || tools->empty()) return Json(nullptr);
  Json out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    SINTER_ASSIGN(Json tool, read_tool((*tools)[i], concat("tools[", i, "]")));
    for (const Json& earlier : out) {
      if (earlier["function"]["name"] == tool["function"]["name"]) {
        return make_error(ErrorCode::kInvalidArgument, "tools[", i, "]: the function name '",
                          tool["function"]["name"].get<std::string>(), "' is given twice");
      }
    }
    out.push_back(std::move(tool));
  }
  return out;
}

bool has_tool(const Json& tools, const std::string& name) {
  if (!tools.is_array()) return false;
  for (const Json& tool : tools)
    if (tool["function"]["name"] == name) return true;
  return false;
}

Status read_tool_choice(const Json* choice, ChatToolOptions& out) {
  if (choice == nullptr) return ok_status();
  if (choice->is_string()) {
    const auto& text = choice->get_ref<const std::string&>();
    if (text == "auto") {
      out.choice = ToolChoice::kAuto;
    } else if (text == "none") {
      out.choice = ToolChoice::kNone;
    } else if (text == "required") {
      out.choice = ToolChoice::kRequired;
    } else {
      return make_error(ErrorCode::kInvalidArgument,
                        "tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", "
                        "\"function\": {\"name\": ...}}, got \"",
                        text, "\"");
    }
  } else if (choice->is_object()) {
    JsonFields fields(*choice, "tool_choice.");
    SINTER_ASSIGN(const auto type, fields.string("type"));
    if (type && *type != "function")
      return make_error(ErrorCode::kInvalidArgument, "tool_choice.type must be \"function\", got \"", *type,
                        "\"");
    SINTER_ASSIGN(const Json* function, fields.object("function"));
    std::optional<std::string> name;
    if (function != nullptr) {
      SINTER_ASSIGN(name, JsonFields(*function, "tool_choice.function.").string("name"));
    }
    if (!name || name->empty())
      return make_error(ErrorCode::kInvalidArgument, "tool_choice.function.name is required");
    out.choice = ToolChoice::kNamed;
    out.named_tool = *name;
  } else {
    return make_error(ErrorCode::kInvalidArgument, "tool_choice must be a string or an object, got ",
                      describe_json(*choice));
  }
  if ((out.choice == ToolChoice::kRequired || out.choice == ToolChoice::kNamed) && !out.has_tools()) {
    return make_error(ErrorCode::kInvalidArgument, "tool_choice is \"",
                      out.choice == ToolChoice::kRequired ? "required" : "a function",
                      "\" but the request gives no tools");
  }
  if (out.choice == ToolChoice::kNamed && !has_tool(out.tools, out.named_tool)) {
    return make_error(ErrorCode::kInvalidArgument, "tool_choice names the function '", out.named_tool,
                      "', which is not in tools");
  }
  return ok_status();
}

}  // namespace

Result<ChatToolOptions> read_openai_tool_options(const Json& body) {
  ChatToolOptions out;
  JsonFields fields(body);
  SINTER_ASSIGN(const Json* functions, fields.array("functions"));
  if (functions != nullptr && !functions->empty())
    return make_error(ErrorCode::kInvalidArgument, "functions are not supported (use tools)");
  SINTER_ASSIGN(out.tools, read_tools(fields));
  SINTER_TRY(read_tool_choice(fields.find("tool_choice"), out));
  SINTER_ASSIGN(const auto parallel, fields.boolean("parallel_tool_calls"));
  out.parallel_calls = parallel.value_or(true);
  SINTER_ASSIGN(const auto reasoning_format, fields.string("reasoning_format"));
  if (reasoning_format) {
    if (*reasoning_format == "none") {
      out.separate_reasoning = false;
    } else if (*reasoning_format != "auto" && *reasoning_format != "deepseek" &&
               *reasoning_format != "deepseek-legacy") {
      return make_error(ErrorCode::kInvalidArgument,
                        "reasoning_format must be \"none\", \"auto\" or \"deepseek\", got \"",
                        *reasoning_format, "\"");
    }
  }
  SINTER_ASSIGN(const Json* kwargs, fields.object("chat_template_kwargs"));
  if (kwargs != nullptr) {
    out.template_kwargs = *kwargs;
    if (const auto it = kwargs->find("enable_thinking"); it != kwargs->end() && !it->is_null()) {
      if (!it->is_boolean()) {
        return make_error(ErrorCode::kInvalidArgument,
                          "chat_template_kwargs.enable_thinking must be a boolean, got ", describe_json(*it));
      }
      out.think = it->get<bool>();
    }
  }
  SINTER_ASSIGN(const auto enable_thinking, fields.boolean("enable_thinking"));
  if (enable_thinking) out.think = *enable_thinking;
  if (out.think) out.template_kwargs["enable_thinking"] = *out.think;
  return out;
}

Result<ChatToolOptions> read_ollama_tool_options(const Json& body) {
  ChatToolOptions out;
  JsonFields fields(body);
  SINTER_ASSIGN(out.tools, read_tools(fields));
  // Not Ollama's: OpenAI's tool_choice and parallel_tool_calls, as an extension.
  SINTER_TRY(read_tool_choice(fields.find("tool_choice"), out));
  SINTER_ASSIGN(const auto parallel, fields.boolean("parallel_tool_calls"));
  out.parallel_calls = parallel.value_or(true);
  if (const Json* think = fields.find("think")) {
    if (think->is_boolean()) {
      out.think = think->get<bool>();
    } else if (think->is_string() && (*think == "high" || *think == "medium" || *think == "low")) {
      out.think = true;
      out.think_level = think->get<std::string>();
      out.template_kwargs["reasoning_effort"] = out.think_level;
    } else {
      return make_error(ErrorCode::kInvalidArgument,
                        "think must be true, false, \"high\", \"medium\" or \"low\", got ",
                        describe_json(*think));
    }
    out.template_kwargs["enable_thinking"] = *out.think;
  }
  return out;
}

Status check_grammar_with_tools(const ChatToolOptions& tools, const std::optional<std::string>& grammar,
                                const char* format_field) {
  if (!tools.calls_tools() || !grammar) return ok_status();
  return make_error(ErrorCode::kInvalidArgument, "tools cannot be combined with grammar or ", format_field,
                    ": tool calls follow their own grammar (tool_choice \"none\" keeps yours)");
}

}  // namespace sinter::server
