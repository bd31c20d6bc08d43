#include "chat/gotemplate/ollama_data.h"

#include <cctype>

#include "chat/gotemplate/json.h"

namespace sinter::chat::gotemplate {
namespace {

using Json = nlohmann::ordered_json;

// The Go types of Ollama's template package (and the api types they hold).
struct OllamaTypes {
  Type image_data{Kind::kSlice, "api.ImageData", &basic_types().byte_t};
  Type images{Kind::kSlice, "[]api.ImageData", &image_data};
  Type args{Kind::kMap, "template.templateArgs", &basic_types().any_t};
  Type call_function{Kind::kStruct, "template.templateToolCallFunction"};
  Type call{Kind::kStruct, "template.templateToolCall"};
  Type calls{Kind::kSlice, "[]template.templateToolCall", &call};
  Type message{Kind::kStruct, "template.templateMessage"};
  Type message_ptr{Kind::kPointer, "*template.templateMessage", &message};
  Type messages{Kind::kSlice, "[]*template.templateMessage", &message_ptr};
  Type property_type{Kind::kSlice, "api.PropertyType", &basic_types().string_t};
  Type property{Kind::kStruct, "api.ToolProperty"};
  Type property_list{Kind::kSlice, "[]api.ToolProperty", &property};
  Type ordered_properties{Kind::kMap, "api.ToolPropertiesMap", &property};
  Type ordered_properties_ptr{Kind::kPointer, "*api.ToolPropertiesMap", &ordered_properties};
  Type properties{Kind::kMap, "template.templateProperties", &property};
  Type parameters{Kind::kStruct, "template.templateToolFunctionParameters"};
  Type function{Kind::kStruct, "template.templateToolFunction"};
  Type tool{Kind::kStruct, "template.templateTool"};
  Type tools{Kind::kSlice, "template.templateTools", &tool};

  OllamaTypes() {
    const BasicTypes& b = basic_types();
    auto f = [](std::string name, const Type* type, std::string json = "", bool omit = false) {
      std::string json_name = json.empty() ? name : json;
      return Field{std::move(name), type, std::move(json_name), omit};
    };
    args.stringer = Stringer::kJsonNilAsEmptyObject;
    call_function.fields = {f("Index", &b.int_t), f("Name", &b.string_t), f("Arguments", &args)};
    call.fields = {f("ID", &b.string_t), f("Function", &call_function)};
    message.fields = {f("Role", &b.string_t),      f("Content", &b.string_t), f("Thinking", &b.string_t),
                      f("Images", &images),        f("ToolCalls", &calls),    f("ToolName", &b.string_t),
                      f("ToolCallID", &b.string_t)};
    property_type.stringer = Stringer::kPropertyType;
    property_type.marshaler = Marshaler::kPropertyType;
    property.fields = {f("AnyOf", &property_list, "anyOf", true),
                       f("Type", &property_type, "type", true),
                       f("Items", &b.any_t, "items", true),
                       f("Description", &b.string_t, "description", true),
                       f("Enum", &b.slice_any, "enum", true),
                       f("Properties", &ordered_properties_ptr, "properties", true),
                       f("Required", &b.slice_string, "required", true)};
    property.has_typescript_method = true;
    ordered_properties_ptr.marshaler = Marshaler::kOrderedMap;
    properties.stringer = Stringer::kJsonNilAsEmptyObject;
    parameters.fields = {f("Type", &b.string_t, "type"), f("Defs", &b.any_t, "$defs", true),
                         f("Items", &b.any_t, "items", true),
                         f("Required", &b.slice_string, "required", true),
                         f("Properties", &properties, "properties")};
    function.fields = {f("Name", &b.string_t, "name"), f("Description", &b.string_t, "description"),
                       f("Parameters", &parameters, "parameters")};
    tool.fields = {f("Type", &b.string_t, "type"), f("Items", &b.any_t, "items", true),
                   f("Function", &function, "function")};
    tool.stringer = Stringer::kJson;
    tools.stringer = Stringer::kJson;
  }
};

const OllamaTypes& types() {
  static const OllamaTypes kTypes;
  return kTypes;
}

// A field of a decoded JSON object: Go's decoder matches names exactly, else case-insensitively.
const Json* member(const Json& object, std::string_view name) {
  if (!object.is_object()) return nullptr;
  auto exact = object.find(std::string(name));
  if (exact != object.end()) return &*exact;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (key.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < key.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(key[i])) ==
             std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (same) return &*it;
  }
  return nullptr;
}

Value string_member(const Json& object, std::string_view name) {
  const Json* v = member(object, name);
  return Value::string(v && v->is_string() ? v->get<std::string>() : std::string());
}

Value any_member(const Json& object, std::string_view name) {
  const Json* v = member(object, name);
  return Value::any(v ? value_from_json(*v) : Value());
}

Value strings_member(const Json& object, std::string_view name, const Type* type) {
  const Json* v = member(object, name);
  if (v == nullptr || !v->is_array()) return Value::nil(type);
  std::vector<Value> items;
  for (const auto& item : *v) items.push_back(Value::string(item.is_string() ? item.get<std::string>() : ""));
  return Value::slice(type, std::move(items));
}

Value tool_property(const Json& json);

MapEntries property_entries(const Json& object) {
  MapEntries entries;
  for (auto it = object.begin(); it != object.end(); ++it)
    entries.emplace_back(it.key(), tool_property(it.value()));
  return entries;
}

Value tool_property(const Json& json) {
  const OllamaTypes& t = types();
  std::vector<Value> fields;
  const Json* any_of = member(json, "anyOf");
  if (any_of != nullptr && any_of->is_array()) {
    std::vector<Value> alternatives;
    for (const auto& item : *any_of) alternatives.push_back(tool_property(item));
    fields.push_back(Value::slice(&t.property_list, std::move(alternatives)));
  } else {
    fields.push_back(Value::nil(&t.property_list));
  }
  const Json* type = member(json, "type");
  if (type != nullptr && type->is_string()) {
    fields.push_back(Value::slice(&t.property_type, {Value::string(type->get<std::string>())}));
  } else {
    fields.push_back(strings_member(json, "type", &t.property_type));
  }
  fields.push_back(any_member(json, "items"));
  fields.push_back(string_member(json, "description"));
  const Json* enumeration = member(json, "enum");
  fields.push_back(enumeration && enumeration->is_array() ? value_from_json(*enumeration)
                                                          : Value::nil(&basic_types().slice_any));
  const Json* properties = member(json, "properties");
  if (properties != nullptr && properties->is_object()) {
    fields.push_back(Value::pointer_to(
        &t.ordered_properties_ptr, Value::map(&t.ordered_properties, property_entries(*properties), true)));
  } else {
    fields.push_back(Value::nil(&t.ordered_properties_ptr));
  }
  fields.push_back(strings_member(json, "required", &basic_types().slice_string));
  return Value::structure(&t.property, std::move(fields));
}

Value template_tool(const Json& tool) {
  const OllamaTypes& t = types();
  const BasicTypes& b = basic_types();
  static const Json kEmpty = Json::object();
  const Json* function = member(tool, "function");
  if (function == nullptr) function = &kEmpty;
  const Json* parameters = member(*function, "parameters");
  if (parameters == nullptr) parameters = &kEmpty;
  const Json* properties = member(*parameters, "properties");
  Value property_map = properties != nullptr && properties->is_object()
                           ? Value::map(&t.properties, property_entries(*properties))
                           : Value::nil(&t.properties);
  Value params = Value::structure(
      &t.parameters,
      {string_member(*parameters, "type"), any_member(*parameters, "$defs"), any_member(*parameters, "items"),
       strings_member(*parameters, "required", &b.slice_string), std::move(property_map)});
  Value fn = Value::structure(&t.function, {string_member(*function, "name"),
                                            string_member(*function, "description"), std::move(params)});
  return Value::structure(&t.tool, {string_member(tool, "type"), any_member(tool, "items"), std::move(fn)});
}

Value template_message(const OllamaMessage& m) {
  const OllamaTypes& t = types();
  const BasicTypes& b = basic_types();
  Value images = Value::nil(&t.images);
  if (!m.images.empty()) {
    std::vector<Value> items;
    for (const std::string& bytes : m.images) items.push_back(Value::of_type(&t.image_data, bytes));
    images = Value::slice(&t.images, std::move(items));
  }
  Value calls = Value::nil(&t.calls);
  if (!m.tool_calls.empty()) {
    std::vector<Value> items;
    for (const OllamaToolCall& call : m.tool_calls) {
      Value arguments = call.arguments.is_object() ? value_from_json(call.arguments) : Value();
      arguments = arguments.valid() ? Value::map(&t.args, arguments.entries()) : Value::nil(&t.args);
      Value fn = Value::structure(&t.call_function,
                                  {Value::integer(call.index), Value::string(call.name), arguments});
      items.push_back(Value::structure(&t.call, {Value::string(call.id), std::move(fn)}));
    }
    calls = Value::slice(&t.calls, std::move(items));
  }
  Value message =
      Value::structure(&t.message, {Value::string(m.role), Value::string(m.content),
                                    Value::string(m.thinking), std::move(images), std::move(calls),
                                    Value::string(m.tool_name), Value::string(m.tool_call_id)});
  (void)b;
  return Value::pointer_to(&t.message_ptr, std::move(message));
}

}  // namespace

std::vector<OllamaMessage> collate_messages(const std::vector<OllamaMessage>& messages, std::string* system) {
  std::vector<OllamaMessage> collated;
  std::vector<const std::string*> systems;
  for (const OllamaMessage& m : messages) {
    if (m.role == "system") systems.push_back(&m.content);
    if (!collated.empty() && collated.back().role == m.role && m.role != "tool") {
      collated.back().content += "\n\n" + m.content;
    } else {
      collated.push_back(m);
    }
  }
  system->clear();
  for (size_t i = 0; i < systems.size(); ++i) {
    if (i > 0) *system += "\n\n";
    *system += *systems[i];
  }
  return collated;
}

Value template_messages(const std::vector<OllamaMessage>& messages) {
  const OllamaTypes& t = types();
  if (messages.empty()) return Value::nil(&t.messages);
  std::vector<Value> items;
  items.reserve(messages.size());
  for (const OllamaMessage& m : messages) items.push_back(template_message(m));
  return Value::slice(&t.messages, std::move(items));
}

Value template_tools(const Json& tools) {
  const OllamaTypes& t = types();
  if (!tools.is_array()) return Value::nil(&t.tools);
  std::vector<Value> items;
  for (const auto& tool : tools) items.push_back(template_tool(tool));
  return Value::slice(&t.tools, std::move(items));
}

Value template_data(std::vector<std::pair<std::string, Value>> entries) {
  for (auto& entry : entries) entry.second = Value::any(std::move(entry.second));
  return Value::map(&basic_types().map_any, std::move(entries));
}

}  // namespace sinter::chat::gotemplate
