#include "server/messages.h"

#include "core/json_parse.h"
#include "server/json_fields.h"

namespace sinter::server {
namespace {

// An assistant message's tool_calls in the shape templates index: each call {"id"?, "type":
// "function", "function": {"name", "arguments": object}}; OpenAI's arguments are JSON text.
Status convert_tool_calls(nlohmann::ordered_json& message, const std::string& where) {
  const auto found = message.find("tool_calls");
  if (found == message.end()) return ok_status();
  nlohmann::ordered_json& calls = *found;
  if (calls.is_null()) {
    message.erase("tool_calls");
    return ok_status();
  }
  if (!calls.is_array()) {
    return make_error(ErrorCode::kInvalidArgument, where, ".tool_calls must be an array, got ",
                      describe_json(calls));
  }
  for (size_t j = 0; j < calls.size(); ++j) {
    nlohmann::ordered_json& call = calls[j];
    const std::string call_where = concat(where, ".tool_calls[", j, "]");
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
      return make_error(ErrorCode::kInvalidArgument, call_where,
                        " must be an object with a \"function\" object");
    }
    // Before taking references into the call: an insertion into an ordered object moves them.
    if (!call.contains("type")) call["type"] = "function";
    nlohmann::ordered_json& function = call["function"];
    if (!function.contains("name") || !function["name"].is_string()) {
      return make_error(ErrorCode::kInvalidArgument, call_where, ".function.name is required");
    }
    nlohmann::ordered_json& arguments = function["arguments"];
    if (arguments.is_null()) {
      arguments = nlohmann::ordered_json::object();
    } else if (arguments.is_string()) {
      auto parsed = parse_json<nlohmann::ordered_json>(arguments.get<std::string>(), "the arguments");
      if (!parsed && parsed.error().code() != ErrorCode::kInvalidArgument) return std::move(parsed).error();
      if (!parsed) {
        return make_error(ErrorCode::kInvalidArgument, call_where,
                          ".function.arguments must be JSON text (an object), got ", describe_json(arguments),
                          " (", parsed.error().message(), ")");
      }
      arguments = std::move(parsed).value();
    }
  }
  return ok_status();
}

}  // namespace

Result<nlohmann::ordered_json> read_messages(const nlohmann::ordered_json& messages, std::string_view field) {
  if (!messages.is_array()) {
    return make_error(ErrorCode::kInvalidArgument, field, " must be an array of messages, got ",
                      describe_json(messages));
  }
  nlohmann::ordered_json result = nlohmann::ordered_json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const nlohmann::ordered_json& message = messages[i];
    const std::string where = concat(field, "[", i, "]");
    if (!message.is_object()) {
      return make_error(ErrorCode::kInvalidArgument, where, " must be an object, got ",
                        describe_json(message));
    }
    JsonFields fields(message, where + ".");
    SINTER_ASSIGN(const auto role, fields.string("role"));
    if (!role || role->empty()) return make_error(ErrorCode::kInvalidArgument, where, ".role is required");
    SINTER_ASSIGN(const nlohmann::ordered_json* images, fields.array("images"));
    if (images != nullptr && !images->empty()) {
      return make_error(ErrorCode::kInvalidArgument, where, ".images: images are not supported");
    }
    nlohmann::ordered_json converted = message;
    converted.erase("images");
    std::string content;
    if (const nlohmann::ordered_json* value = fields.find("content")) {
      if (value->is_string()) {
        content = value->get<std::string>();
      } else if (value->is_array()) {
        for (size_t j = 0; j < value->size(); ++j) {
          const nlohmann::ordered_json& part = (*value)[j];
          const std::string part_where = concat(where, ".content[", j, "]");
          if (!part.is_object()) {
            return make_error(ErrorCode::kInvalidArgument, part_where, " must be an object, got ",
                              describe_json(part));
          }
          JsonFields part_fields(part, part_where + ".");
          SINTER_ASSIGN(const auto type, part_fields.string("type"));
          if (type != "text") {
            return make_error(ErrorCode::kInvalidArgument, part_where,
                              ": only text parts are supported, got type '", type.value_or(""), "'");
          }
          SINTER_ASSIGN(const auto text, part_fields.string("text"));
          if (!content.empty()) content += "\n";
          content += text.value_or("");
        }
      } else {
        return make_error(ErrorCode::kInvalidArgument, where,
                          ".content must be a string or an array of text parts, got ", describe_json(*value));
      }
    }
    converted["content"] = content;
    SINTER_TRY(convert_tool_calls(converted, where));
    // Ollama names a tool result's function `tool_name` and an answer's reasoning `thinking`;
    // Jinja templates read `name` and `reasoning_content` (Qwen3 keeps the last turn's thinking).
    if (converted.contains("tool_name") && converted["tool_name"].is_string() && !converted.contains("name"))
      converted["name"] = converted["tool_name"];
    if (converted.contains("thinking") && converted["thinking"].is_string() &&
        !converted.contains("reasoning_content"))
      converted["reasoning_content"] = converted["thinking"];
    result.push_back(std::move(converted));
  }
  return result;
}

}  // namespace sinter::server
