// Ollama's template.Parse and Template.Execute on top of the Go template engine.
#include "chat/gotemplate/ollama_template.h"

#include <algorithm>
#include <cctype>

#include "chat/gotemplate/ast.h"
#include "chat/gotemplate/exec.h"
#include "chat/gotemplate/functions.h"
#include "chat/gotemplate/ollama_data.h"
#include "chat/gotemplate/parser.h"

namespace sinter::chat {

using gotemplate::Node;
using gotemplate::NodePtr;
using gotemplate::NodeType;
using gotemplate::Value;

struct OllamaTemplate::Parsed {
  std::string source;
  gotemplate::TreeSet templates;
  bool uses_messages = false;
};

namespace {

using Json = nlohmann::ordered_json;

// Ollama's Identifiers: the field and variable names a node mentions. False for a
// {{template "name"}} without a pipeline, which Ollama rejects ("undefined template specified").
bool identifiers(const Node& n, std::vector<std::string>* names) {
  switch (n.type) {
    case NodeType::kList:
      for (const NodePtr& child : n.nodes) {
        if (!identifiers(*child, names)) return false;
      }
      return true;
    case NodeType::kTemplate:
      if (!n.pipe) return false;
      return identifiers(*n.pipe, names);
    case NodeType::kAction: return identifiers(*n.pipe, names);
    case NodeType::kIf:
    case NodeType::kRange:
    case NodeType::kWith:
      if (!identifiers(*n.pipe, names)) return false;
      if (!identifiers(*n.list, names)) return false;
      return !n.else_list || identifiers(*n.else_list, names);
    case NodeType::kPipe:
      for (const NodePtr& cmd : n.nodes) {
        for (const NodePtr& arg : cmd->nodes) {
          if (!identifiers(*arg, names)) return false;
        }
      }
      return true;
    case NodeType::kField:
    case NodeType::kVariable: names->insert(names->end(), n.ident.begin(), n.ident.end()); return true;
    default: return true;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Ollama's Vars: the lower-cased identifiers of every template of the set.
Result<std::vector<std::string>> template_vars(const gotemplate::TreeSet& templates) {
  std::vector<std::string> names;
  for (const auto& [name, tree] : templates) {
    if (!tree->root) continue;
    for (const NodePtr& n : tree->root->nodes) {
      if (!identifiers(*n, &names)) return Error(ErrorCode::kInvalidArgument, "undefined template specified");
    }
  }
  for (std::string& name : names) name = lower(std::move(name));
  return names;
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Ollama's deleteNode with the predicate of Execute: keeps everything up to and including the first
// field that mentions Response and deletes what follows. Returns null for a deleted node; sets
// *failed where Ollama's walk would panic (an else branch after the cut).
class ResponseCut {
 public:
  NodePtr walk(const NodePtr& n) {
    if (cut_matches(*n)) return nullptr;
    switch (n->type) {
      case NodeType::kList: {
        std::vector<NodePtr> kept;
        for (const NodePtr& child : n->nodes) {
          if (NodePtr k = walk(child)) kept.push_back(k);
        }
        n->nodes = std::move(kept);
        return n;
      }
      case NodeType::kIf:
      case NodeType::kWith:
      case NodeType::kRange:
        // walk(&t.BranchNode): the branch itself is tested (not cut yet), then its lists.
        n->list = walk(n->list);
        if (!n->list) failed = true;
        if (n->else_list) {
          n->else_list = walk(n->else_list);
          if (!n->else_list) failed = true;
        }
        return n;
      case NodeType::kAction: {
        NodePtr pipe = walk(n->pipe);
        if (!pipe) return nullptr;
        n->pipe = pipe;
        return n;
      }
      case NodeType::kPipe: {
        std::vector<NodePtr> commands;
        for (const NodePtr& cmd : n->nodes) {
          std::vector<NodePtr> args;
          for (const NodePtr& arg : cmd->nodes) {
            if (NodePtr a = walk(arg)) args.push_back(a);
          }
          if (args.empty()) return nullptr;
          cmd->nodes = std::move(args);
          commands.push_back(cmd);
        }
        if (commands.empty()) return nullptr;
        n->nodes = std::move(commands);
        return n;
      }
      default: return n;
    }
  }
  bool failed = false;

 private:
  bool cut_matches(const Node& n) {
    if (n.type == NodeType::kField &&
        std::find(n.ident.begin(), n.ident.end(), "Response") != n.ident.end()) {
      cut_ = true;
      return false;
    }
    return cut_;
  }
  bool cut_ = false;
};

std::chrono::system_clock::time_point clock_of(const OllamaTemplateData& data) {
  return data.now ? *data.now : std::chrono::system_clock::now();
}

gotemplate::ExecBudget budget_of(const RenderLimits& limits) {
  return gotemplate::ExecBudget{limits.max_output_bytes, limits.max_value_bytes, limits.max_steps,
                                limits.max_template_depth};
}

bool is_function(std::string_view name) {
  std::string key(name);
  return gotemplate::builtin_functions().count(key) > 0 || gotemplate::ollama_functions().count(key) > 0;
}

bool base64_decode(std::string_view text, std::string* out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out->clear();
  if (text.size() % 4 != 0) return false;
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + static_cast<size_t>(k)];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = value(c)) < 0) {
        return false;
      }
    }
    uint32_t n = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                 (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    *out += static_cast<char>(n >> 16);
    if (pad < 2) *out += static_cast<char>((n >> 8) & 0xFF);
    if (pad < 1) *out += static_cast<char>(n & 0xFF);
  }
  return true;
}

std::string string_field(const Json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<std::vector<OllamaMessage>> ollama_messages_from_json(const Json& messages) {
  std::vector<OllamaMessage> out;
  if (messages.is_null()) return out;
  if (!messages.is_array()) return Error(ErrorCode::kInvalidArgument, "messages must be an array");
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    if (!m.is_object()) return make_error(ErrorCode::kInvalidArgument, "messages[", i, "] must be an object");
    OllamaMessage message;
    message.role = lower(string_field(m, "role"));
    message.content = string_field(m, "content");
    message.thinking = string_field(m, "thinking");
    message.tool_name = string_field(m, "tool_name");
    message.tool_call_id = string_field(m, "tool_call_id");
    if (auto images = m.find("images"); images != m.end() && images->is_array()) {
      for (const Json& image : *images) {
        std::string bytes;
        if (!image.is_string() || !base64_decode(image.get<std::string>(), &bytes)) {
          return make_error(ErrorCode::kInvalidArgument, "messages[", i, "].images: not base64 data");
        }
        message.images.push_back(std::move(bytes));
      }
    }
    if (auto calls = m.find("tool_calls"); calls != m.end() && calls->is_array()) {
      for (const Json& call : *calls) {
        OllamaToolCall tool_call;
        tool_call.id = string_field(call, "id");
        if (auto fn = call.find("function"); fn != call.end() && fn->is_object()) {
          tool_call.name = string_field(*fn, "name");
          if (auto index = fn->find("index"); index != fn->end() && index->is_number_integer()) {
            tool_call.index = index->get<int>();
          }
          if (auto args = fn->find("arguments"); args != fn->end()) {
            if (!args->is_object() && !args->is_null()) {
              return make_error(ErrorCode::kInvalidArgument, "messages[", i,
                                "].tool_calls: function arguments must be an object");
            }
            tool_call.arguments = *args;
          }
        }
        message.tool_calls.push_back(std::move(tool_call));
      }
    }
    out.push_back(std::move(message));
  }
  return out;
}

Result<OllamaTemplate> OllamaTemplate::parse(std::string_view source) {
  gotemplate::ParseOptions options;
  options.is_function = is_function;
  SINTER_ASSIGN(gotemplate::TreeSet templates, gotemplate::parse_template(source, "", options));
  SINTER_ASSIGN(std::vector<std::string> vars, template_vars(templates));
  auto parsed = std::make_shared<Parsed>();
  parsed->source = std::string(source);
  parsed->uses_messages = contains(vars, "messages");
  auto main = templates.find("");
  if (main == templates.end()) {
    return Error(ErrorCode::kInvalidArgument, "template: \"\" is an incomplete or empty template");
  }
  if (!parsed->uses_messages && !contains(vars, "response")) {
    // Ollama appends {{ .Response }} to templates that have neither.
    auto field = std::make_shared<Node>();
    field->type = NodeType::kField;
    field->ident = {"Response"};
    field->tree = main->second.get();
    auto command = std::make_shared<Node>(*field);
    command->type = NodeType::kCommand;
    command->ident.clear();
    command->nodes = {field};
    auto pipe = std::make_shared<Node>(*command);
    pipe->type = NodeType::kPipe;
    pipe->nodes = {command};
    auto action = std::make_shared<Node>(*pipe);
    action->type = NodeType::kAction;
    action->nodes.clear();
    action->pipe = pipe;
    main->second->root->nodes.push_back(action);
  }
  parsed->templates = std::move(templates);
  OllamaTemplate result;
  result.parsed_ = std::move(parsed);
  return result;
}

const std::string& OllamaTemplate::source() const { return parsed_->source; }

bool OllamaTemplate::uses_messages() const { return parsed_->uses_messages; }

Result<std::string> OllamaTemplate::render(const OllamaTemplateData& data, const RenderLimits& limits) const {
  const gotemplate::TreeSet& templates = parsed_->templates;
  const Node& root = *templates.at("")->root;
  gotemplate::ExecCounters counters;
  gotemplate::ExecOptions options;
  options.missing_key_zero = true;
  options.functions = &gotemplate::ollama_functions();
  options.context.now = clock_of(data);
  options.budget = budget_of(limits);
  options.counters = &counters;
  auto think_entries = [&](std::vector<std::pair<std::string, Value>>* entries) {
    entries->emplace_back("Think", Value::boolean(data.think));
    entries->emplace_back("ThinkLevel", Value::string(data.think_level));
    entries->emplace_back("IsThinkSet", Value::boolean(data.is_think_set));
  };

  std::string system;
  std::vector<OllamaMessage> messages = gotemplate::collate_messages(data.messages, &system);
  std::string out;
  if (!data.prompt.empty() && !data.suffix.empty()) {
    std::vector<std::pair<std::string, Value>> entries = {{"Prompt", Value::string(data.prompt)},
                                                          {"Suffix", Value::string(data.suffix)},
                                                          {"Response", Value::string("")}};
    think_entries(&entries);
    SINTER_TRY(gotemplate::execute_template(templates, "", root,
                                            gotemplate::template_data(std::move(entries)), options, &out));
    return out;
  }
  if (parsed_->uses_messages) {
    std::vector<std::pair<std::string, Value>> entries = {
        {"System", Value::string(system)},
        {"Messages", gotemplate::template_messages(messages)},
        {"Tools", gotemplate::template_tools(data.tools)},
        {"Response", Value::string("")}};
    think_entries(&entries);
    SINTER_TRY(gotemplate::execute_template(templates, "", root,
                                            gotemplate::template_data(std::move(entries)), options, &out));
    return out;
  }

  // A legacy template: one rendering per turn, then the last turn cut after .Response.
  std::string prompt, response;
  system.clear();
  auto turn_data = [&]() {
    std::vector<std::pair<std::string, Value>> entries = {{"System", Value::string(system)},
                                                          {"Prompt", Value::string(prompt)},
                                                          {"Response", Value::string(response)}};
    think_entries(&entries);
    return gotemplate::template_data(std::move(entries));
  };
  auto execute_turn = [&]() -> Status {
    SINTER_TRY(gotemplate::execute_template(templates, "", root, turn_data(), options, &out));
    system.clear();
    prompt.clear();
    response.clear();
    return ok_status();
  };
  for (const OllamaMessage& m : messages) {
    if (m.role == "system") {
      if (!prompt.empty() || !response.empty()) SINTER_TRY(execute_turn());
      system = m.content;
    } else if (m.role == "user") {
      if (!response.empty()) SINTER_TRY(execute_turn());
      prompt = m.content;
    } else if (m.role == "assistant") {
      response = m.content;
    }
  }
  ResponseCut cut;
  NodePtr last = cut.walk(root.copy());
  if (cut.failed || !last) {
    return Error(ErrorCode::kInvalidArgument,
                 "template: cannot render the last turn: .Response inside a branch that has an else");
  }
  gotemplate::TreeSet only_last;
  auto tree = std::make_shared<gotemplate::Tree>(*templates.at(""));
  tree->root = last;
  only_last[""] = tree;
  gotemplate::ExecOptions plain = options;  // a new template: no functions, missing keys print <no value>
  plain.missing_key_zero = false;
  plain.functions = nullptr;
  SINTER_TRY(gotemplate::execute_template(only_last, "", *last, turn_data(), plain, &out));
  return out;
}

Result<std::string> render_ollama_template(std::string_view source, const OllamaTemplateData& data,
                                           const RenderLimits& limits) {
  SINTER_ASSIGN(OllamaTemplate tmpl, OllamaTemplate::parse(source));
  return tmpl.render(data, limits);
}

bool looks_like_go_template(std::string_view source) {
  if (source.find("{%") != std::string_view::npos || source.find("{#") != std::string_view::npos)
    return false;
  static const std::string_view kKeywords[] = {"if",       "range",  "with",  "end",   "else",
                                               "template", "define", "block", "break", "continue"};
  for (size_t pos = source.find("{{"); pos != std::string_view::npos; pos = source.find("{{", pos + 2)) {
    std::string_view rest = source.substr(pos + 2);
    if (rest.starts_with("-")) rest.remove_prefix(1);
    size_t start = rest.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    if (rest.starts_with(".") || rest.starts_with("$") || rest.starts_with("/*")) return true;
    for (std::string_view keyword : kKeywords) {
      if (rest.starts_with(keyword)) {
        char after = rest.size() > keyword.size() ? rest[keyword.size()] : ' ';
        if (after == ' ' || after == '\t' || after == '\n' || after == '\r' || after == '}' || after == '-') {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace sinter::chat
