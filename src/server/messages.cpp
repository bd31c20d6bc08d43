#include "server/messages.h"

#include "server/json_fields.h"

namespace sinter::server {

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
    result.push_back(std::move(converted));
  }
  return result;
}

}  // namespace sinter::server
