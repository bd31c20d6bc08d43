// A port of the structure of Go's exec.go. Go reports execution errors by panicking; a private
// exception does the same inside this file, and execute_template turns it into an Error.
// {{break}} and {{continue}} travel as return values instead.
#include "chat/gotemplate/exec.h"

#include <unordered_map>
#include <vector>

#include "chat/gotemplate/fmt.h"
#include "chat/gotemplate/json.h"

namespace sinter::chat::gotemplate {
namespace {

struct ExecFailure {
  std::string message;
};

enum class Control { kNone, kBreak, kContinue };

// How an argument is converted: by a reflect.Value, `any` or string parameter, or not at all
// (the operand of a chain, which Go evaluates with a nil type).
enum class ArgType { kValue, kAny, kString, kNone };

ArgType arg_type(ParamType p) {
  switch (p) {
    case ParamType::kValue: return ArgType::kValue;
    case ParamType::kAny: return ArgType::kAny;
    case ParamType::kString: return ArgType::kString;
  }
  return ArgType::kNone;
}

std::string type_name(ArgType t) {
  switch (t) {
    case ArgType::kValue: return "reflect.Value";
    case ArgType::kAny: return "interface {}";
    case ArgType::kString: return "string";
    case ArgType::kNone: return "<nil>";
  }
  return "";
}

// The variables of one template invocation: a stack, with an index per name so that a lookup
// does not scan the stack (templates may declare many variables).
class Variables {
 public:
  void push(const std::string& name, Value value) {
    positions_[name].push_back(vars_.size());
    vars_.emplace_back(name, std::move(value));
  }
  size_t mark() const { return vars_.size(); }
  void pop(size_t mark) {
    while (vars_.size() > mark) {
      positions_[vars_.back().first].pop_back();
      vars_.pop_back();
    }
  }
  Value* find(const std::string& name) {
    auto it = positions_.find(name);
    if (it == positions_.end() || it->second.empty()) return nullptr;
    return &vars_[it->second.back()].second;
  }
  void set_top(size_t n, Value value) { vars_[vars_.size() - n].second = std::move(value); }

 private:
  std::vector<std::pair<std::string, Value>> vars_;
  std::unordered_map<std::string, std::vector<size_t>> positions_;
};

struct Shared {
  const TreeSet* templates;
  const ExecOptions* options;
  std::string* out;
  std::string parse_name;
  ExecCounters* counters;
};

class State {
 public:
  State(Shared* shared, std::string name, const Tree* tree, int depth)
      : shared_(shared), name_(std::move(name)), tree_(tree), depth_(depth) {}

  Control walk(const Value& dot, const Node& node);
  Variables vars;

 private:
  [[noreturn]] void errorf(const std::string& message) const;
  void at(const Node* node) { node_ = node; }
  void step();
  void write(std::string_view text);

  Control walk_if_or_with(const Value& dot, const Node& node);
  Control walk_range(const Value& dot, const Node& node);
  void walk_template(const Value& dot, const Node& node);
  Value eval_pipeline(const Value& dot, const Node* pipe);
  void not_a_function(const std::vector<NodePtr>& args, const Value* final) const;
  Value eval_command(const Value& dot, const Node& cmd, const Value* final);
  Value ideal_constant(const Node& constant);
  Value eval_field_node(const Value& dot, const Node& field, const std::vector<NodePtr>& args,
                        const Value* final);
  Value eval_chain_node(const Value& dot, const Node& chain, const std::vector<NodePtr>& args,
                        const Value* final);
  Value eval_variable_node(const Value& dot, const Node& variable, const std::vector<NodePtr>& args,
                           const Value* final);
  Value eval_field_chain(const Value& dot, Value receiver, const Node& node,
                         const std::vector<std::string>& ident, size_t first,
                         const std::vector<NodePtr>& args, const Value* final);
  Value eval_function(const Value& dot, const Node& ident, const Node& cmd, const std::vector<NodePtr>& args,
                      const Value* final);
  Value eval_field(const Value& dot, const std::string& name, const Node& node,
                   const std::vector<NodePtr>& args, const Value* final, const Value& receiver);
  Value eval_call(const Value& dot, const Function& fn, bool is_builtin, const Node& node,
                  const std::string& name, const std::vector<NodePtr>& args, const Value* final);
  Value eval_method(const std::string& name, const Node& node, const std::vector<NodePtr>& args,
                    const Value* final, const Value& receiver);
  Value validate_type(const Value& value, ArgType type);
  Value eval_arg(const Value& dot, ArgType type, const Node& n);
  Value eval_empty_interface(const Value& dot, const Node& n);
  void print_value(const Node& node, const Value& v);

  Shared* shared_;
  std::string name_;
  const Tree* tree_;
  int depth_;
  const Node* node_ = nullptr;
};

void State::errorf(const std::string& message) const {
  if (node_ == nullptr) throw ExecFailure{"template: " + name_ + ": " + message};
  // ErrorContext: line and byte column of the node in its template's text.
  const Tree* tree = node_->tree != nullptr ? node_->tree : tree_;
  std::string_view text = tree && tree->text ? std::string_view(*tree->text) : std::string_view();
  size_t pos = std::min(node_->pos, text.size());
  std::string_view before = text.substr(0, pos);
  size_t last_newline = before.rfind('\n');
  size_t column = last_newline == std::string_view::npos ? pos : pos - last_newline - 1;
  size_t line = 1;
  for (char c : before) line += c == '\n';
  throw ExecFailure{concat("template: ", shared_->parse_name, ":", line, ":", column, ": executing ",
                           go_quote(name_), " at <", node_->to_string(), ">: ", message)};
}

void State::step() {
  const ExecBudget& budget = shared_->options->budget;
  if (++shared_->counters->steps > budget.max_steps) {
    throw ExecFailure{
        concat("template: rendering budget exceeded: more than ", budget.max_steps, " evaluation steps")};
  }
}

void State::write(std::string_view text) {
  const ExecBudget& budget = shared_->options->budget;
  if (shared_->out->size() + text.size() > budget.max_output_bytes) {
    throw ExecFailure{
        concat("template: rendering budget exceeded: output over ", budget.max_output_bytes, " bytes")};
  }
  shared_->out->append(text);
}

Control State::walk(const Value& dot, const Node& node) {
  step();
  at(&node);
  switch (node.type) {
    case NodeType::kAction: {
      Value val = eval_pipeline(dot, node.pipe.get());
      if (node.pipe->decl.empty()) print_value(node, val);
      return Control::kNone;
    }
    case NodeType::kBreak: return Control::kBreak;
    case NodeType::kContinue: return Control::kContinue;
    case NodeType::kComment: return Control::kNone;
    case NodeType::kIf:
    case NodeType::kWith: return walk_if_or_with(dot, node);
    case NodeType::kList:
      for (const NodePtr& child : node.nodes) {
        Control c = walk(dot, *child);
        if (c != Control::kNone) return c;
      }
      return Control::kNone;
    case NodeType::kRange: return walk_range(dot, node);
    case NodeType::kTemplate: walk_template(dot, node); return Control::kNone;
    case NodeType::kText: write(node.text); return Control::kNone;
    default: errorf("unknown node: " + node.to_string());
  }
}

Control State::walk_if_or_with(const Value& dot, const Node& node) {
  size_t mark = vars.mark();
  Value val = eval_pipeline(dot, node.pipe.get());
  bool ok = false;
  bool truth = is_true(indirect_interface(val), &ok);
  if (!ok) errorf("if/with can't use " + go_sprintf("%v", {val}));
  Control c = Control::kNone;
  if (truth) {
    c = walk(node.type == NodeType::kWith ? val : dot, *node.list);
  } else if (node.else_list) {
    c = walk(dot, *node.else_list);
  }
  vars.pop(mark);
  return c;
}

Control State::walk_range(const Value& dot, const Node& node) {
  at(&node);
  size_t outer_mark = vars.mark();
  bool nil = false;
  Value val = indirect(eval_pipeline(dot, node.pipe.get()), &nil);
  size_t mark = vars.mark();
  const size_t declared = node.pipe->decl.size();
  // One iteration; true when the loop must stop ({{break}}).
  auto iteration = [&](Value index, Value elem) {
    if (declared > 0) vars.set_top(1, elem);
    if (declared > 1) vars.set_top(2, std::move(index));
    Control c = walk(elem, *node.list);
    vars.pop(mark);
    return c == Control::kBreak;
  };
  bool iterated = false;
  switch (val.kind()) {
    case Kind::kSlice:
      for (size_t i = 0; i < val.len(); ++i) {
        iterated = true;
        if (iteration(Value::integer(static_cast<int64_t>(i)), val.index(i))) break;
      }
      break;
    case Kind::kMap:
      for (const auto& [key, value] : val.entries()) {
        iterated = true;
        if (iteration(Value::string(key), value)) break;
      }
      break;
    case Kind::kInt: {  // Go 1.22 and later range over an integer
      at(&node);
      if (declared > 1)
        errorf("can't use " + go_sprintf("%v", {val}) + " to iterate over more than one variable");
      for (int64_t i = 0; i < val.as_int(); ++i) {
        iterated = true;
        if (iteration(Value::integer(i), Value::integer(i))) break;
      }
      break;
    }
    case Kind::kInvalid: break;  // a nil map or the like: acts as empty
    default: at(&node); errorf("range can't iterate over " + go_sprintf("%v", {val}));
  }
  Control result = Control::kNone;
  if (!iterated && node.else_list) {
    Control c = walk(dot, *node.else_list);
    if (c == Control::kContinue) result = c;  // a {{break}} there ends this (finished) range, as in Go
  }
  vars.pop(outer_mark);
  return result;
}

void State::walk_template(const Value& dot, const Node& node) {
  at(&node);
  auto found = shared_->templates->find(node.text);
  if (found == shared_->templates->end() || !found->second->root) {
    errorf("template " + go_quote(node.text) + " not defined");
  }
  int max_depth = shared_->options->budget.max_template_depth;
  if (depth_ >= max_depth) errorf(concat("exceeded maximum template depth (", max_depth, ")"));
  Value new_dot = eval_pipeline(dot, node.pipe.get());
  State sub(shared_, found->first, found->second.get(), depth_ + 1);
  sub.vars.push("$", new_dot);
  sub.walk(new_dot, *found->second->root);
}

Value State::eval_pipeline(const Value& dot, const Node* pipe) {
  if (pipe == nullptr) return Value();
  at(pipe);
  Value value;
  bool has_final = false;
  for (const NodePtr& cmd : pipe->nodes) {
    value = eval_command(dot, *cmd, has_final ? &value : nullptr);
    has_final = true;
    if (value.kind() == Kind::kInterface) value = indirect_interface(value);  // dig down one level
  }
  for (const NodePtr& variable : pipe->decl) {
    if (pipe->is_assign) {
      Value* slot = vars.find(variable->ident[0]);
      if (slot == nullptr) errorf("undefined variable: " + variable->ident[0]);
      *slot = value;
    } else {
      vars.push(variable->ident[0], value);
    }
  }
  return value;
}

void State::not_a_function(const std::vector<NodePtr>& args, const Value* final) const {
  if (args.size() > 1 || final != nullptr)
    errorf("can't give argument to non-function " + args[0]->to_string());
}

Value State::eval_command(const Value& dot, const Node& cmd, const Value* final) {
  step();
  const Node& first = *cmd.nodes[0];
  switch (first.type) {
    case NodeType::kField: return eval_field_node(dot, first, cmd.nodes, final);
    case NodeType::kChain: return eval_chain_node(dot, first, cmd.nodes, final);
    case NodeType::kIdentifier: return eval_function(dot, first, cmd, cmd.nodes, final);
    case NodeType::kPipe: not_a_function(cmd.nodes, final); return eval_pipeline(dot, &first);
    case NodeType::kVariable: return eval_variable_node(dot, first, cmd.nodes, final);
    default: break;
  }
  at(&first);
  not_a_function(cmd.nodes, final);
  switch (first.type) {
    case NodeType::kBool: return Value::boolean(first.boolean);
    case NodeType::kDot: return dot;
    case NodeType::kNil: errorf("nil is not a command");
    case NodeType::kNumber: return ideal_constant(first);
    case NodeType::kString: return Value::string(first.value);
    default: break;
  }
  errorf("can't evaluate command " + go_quote(first.to_string()));
}

Value State::ideal_constant(const Node& constant) {
  at(&constant);
  const Number& n = constant.number;
  const std::string& text = constant.text;
  bool hex_int = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
                 text.find_first_of("pP") == std::string::npos;
  bool rune_int = !text.empty() && text[0] == '\'';
  if (n.is_float && !hex_int && !rune_int && text.find_first_of(".eEpP") != std::string::npos) {
    return Value::float64(n.float64);
  }
  if (n.is_int) return Value::integer(n.int64);
  if (n.is_uint) errorf(text + " overflows int");
  return Value();
}

Value State::eval_field_node(const Value& dot, const Node& field, const std::vector<NodePtr>& args,
                             const Value* final) {
  at(&field);
  return eval_field_chain(dot, dot, field, field.ident, 0, args, final);
}

Value State::eval_chain_node(const Value& dot, const Node& chain, const std::vector<NodePtr>& args,
                             const Value* final) {
  at(&chain);
  if (chain.ident.empty()) errorf("internal error: no fields in evalChainNode");
  if (chain.operand->type == NodeType::kNil)
    errorf("indirection through explicit nil in " + chain.to_string());
  Value pipe = eval_arg(dot, ArgType::kNone, *chain.operand);
  return eval_field_chain(dot, pipe, chain, chain.ident, 0, args, final);
}

Value State::eval_variable_node(const Value& dot, const Node& variable, const std::vector<NodePtr>& args,
                                const Value* final) {
  at(&variable);
  Value* value = vars.find(variable.ident[0]);
  if (value == nullptr) errorf("undefined variable: " + variable.ident[0]);
  if (variable.ident.size() == 1) {
    not_a_function(args, final);
    return *value;
  }
  return eval_field_chain(dot, *value, variable, variable.ident, 1, args, final);
}

Value State::eval_field_chain(const Value& dot, Value receiver, const Node& node,
                              const std::vector<std::string>& ident, size_t first,
                              const std::vector<NodePtr>& args, const Value* final) {
  size_t n = ident.size();
  static const std::vector<NodePtr> kNoArgs;
  for (size_t i = first; i + 1 < n; ++i)
    receiver = eval_field(dot, ident[i], node, kNoArgs, nullptr, receiver);
  return eval_field(dot, ident[n - 1], node, args, final, receiver);
}

Value State::eval_function(const Value& dot, const Node& ident, const Node& cmd,
                           const std::vector<NodePtr>& args, const Value* final) {
  at(&ident);
  const std::string& name = ident.text;
  const FunctionTable* user = shared_->options->functions;
  if (user != nullptr) {
    auto found = user->find(name);
    if (found != user->end()) return eval_call(dot, found->second, false, cmd, name, args, final);
  }
  const FunctionTable& builtins = builtin_functions();
  auto found = builtins.find(name);
  if (found == builtins.end()) errorf(go_quote(name) + " is not a defined function");
  return eval_call(dot, found->second, true, cmd, name, args, final);
}

Value State::eval_method(const std::string& name, const Node& node, const std::vector<NodePtr>& args,
                         const Value* final, const Value& receiver) {
  size_t num_in = (args.empty() ? 0 : args.size() - 1) + (final ? 1 : 0);
  if (num_in != 0) errorf(concat("wrong number of args for ", name, ": want 0 got ", num_in));
  (void)node;
  if (name == "String") return Value::string(stringer_text(receiver));
  return Value::string(to_typescript_type(receiver));
}

Value State::eval_field(const Value& dot, const std::string& name, const Node& node,
                        const std::vector<NodePtr>& args, const Value* final, const Value& receiver_in) {
  (void)dot;
  if (!receiver_in.valid()) return Value();
  const Type* type = receiver_in.type();
  bool nil = false;
  Value receiver = indirect(receiver_in, &nil);
  if (receiver.kind() == Kind::kInterface && nil) errorf("nil pointer evaluating " + type->name + "." + name);
  if (!nil) {
    const Type* rt = receiver.type();
    if ((name == "String" && rt->stringer != Stringer::kNone) ||
        (name == "ToTypeScriptType" && rt->has_typescript_method)) {
      return eval_method(name, node, args, final, receiver);
    }
  }
  bool has_args = args.size() > 1 || final != nullptr;
  switch (receiver.kind()) {
    case Kind::kStruct: {
      const auto& fields = receiver.type()->fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].name != name) continue;
        if (has_args) errorf(name + " has arguments but cannot be invoked as function");
        return receiver.field(i);
      }
      break;
    }
    case Kind::kMap: {
      if (has_args) errorf(name + " is not a method but has arguments");
      const Value* found = receiver.find(name);
      if (found != nullptr) return *found;
      return shared_->options->missing_key_zero ? Value::zero(receiver.type()->elem) : Value();
    }
    case Kind::kPointer: {
      const Type* target = receiver.type()->elem;
      if (target->kind == Kind::kStruct) {
        bool has_field = false;
        for (const Field& f : target->fields) has_field = has_field || f.name == name;
        if (!has_field) break;
      }
      if (nil) errorf("nil pointer evaluating " + type->name + "." + name);
      break;
    }
    default: break;
  }
  errorf("can't evaluate field " + name + " in type " + type->name);
}

Value State::eval_call(const Value& dot, const Function& fn, bool is_builtin, const Node& node,
                       const std::string& name, const std::vector<NodePtr>& all_args, const Value* final) {
  std::vector<const Node*> args;
  for (size_t i = 1; i < all_args.size(); ++i) args.push_back(all_args[i].get());
  size_t num_in = args.size() + (final ? 1 : 0);
  size_t num_params = fn.params.size();
  size_t num_fixed = args.size();
  if (fn.variadic) {
    num_fixed = num_params - 1;
    if (num_in < num_fixed) {
      errorf(concat("wrong number of args for ", name, ": want at least ", num_params - 1, " got ",
                    args.size()));
    }
  } else if (num_in != num_params) {
    errorf(concat("wrong number of args for ", name, ": want ", num_params, " got ", num_in));
  }
  if (is_builtin && (name == "and" || name == "or")) {
    Value v;
    for (const Node* arg : args) {
      v = eval_arg(dot, ArgType::kValue, *arg);
      bool ok = false;
      if (is_true(indirect_interface(v), &ok) == (name == "or")) return v;
    }
    if (final) v = validate_type(*final, ArgType::kValue);
    return v;
  }
  std::vector<Value> argv;
  size_t i = 0;
  for (; i < num_fixed && i < args.size(); ++i)
    argv.push_back(eval_arg(dot, arg_type(fn.params[i]), *args[i]));
  if (fn.variadic) {
    for (; i < args.size(); ++i) argv.push_back(eval_arg(dot, arg_type(fn.params.back()), *args[i]));
  }
  if (final) {
    ParamType t = fn.params.back();
    if (fn.variadic && num_in - 1 < num_fixed) t = fn.params[num_in - 1];
    argv.push_back(validate_type(*final, arg_type(t)));
  }
  std::string error;
  Value result = fn.call(argv, shared_->options->context, &error);
  if (!error.empty()) {
    at(&node);
    errorf("error calling " + name + ": " + error);
  }
  if (result.kind() == Kind::kString) {
    const ExecBudget& budget = shared_->options->budget;
    shared_->counters->value_bytes += result.len();
    if (shared_->counters->value_bytes > budget.max_value_bytes) {
      throw ExecFailure{concat("template: rendering budget exceeded: functions made over ",
                               budget.max_value_bytes, " bytes of strings")};
    }
  }
  return result;
}

Value State::validate_type(const Value& value, ArgType type) {
  if (!value.valid()) {
    switch (type) {
      case ArgType::kNone:
      case ArgType::kValue: return Value();
      case ArgType::kAny: return Value::nil(&basic_types().any_t);
      case ArgType::kString: errorf("invalid value; expected string");
    }
  }
  if (type != ArgType::kString) return value;
  const Type* string_type = &basic_types().string_t;
  if (value.type() == string_type) return value;
  if (value.kind() == Kind::kInterface && !value.is_nil() && value.elem().type() == string_type)
    return value.elem();
  errorf("wrong type for value; expected string; got " + value.type()->name);
}

Value State::eval_arg(const Value& dot, ArgType type, const Node& n) {
  at(&n);
  static const std::vector<NodePtr> kNoArgs;
  switch (n.type) {
    case NodeType::kDot: return validate_type(dot, type);
    case NodeType::kNil:
      if (type == ArgType::kString) errorf("cannot assign nil to string");
      return type == ArgType::kAny ? Value::nil(&basic_types().any_t) : Value();
    case NodeType::kField: {
      static const std::vector<NodePtr> kSelfOnly(1);  // Go passes []parse.Node{n}: no arguments
      return validate_type(eval_field_node(dot, n, kSelfOnly, nullptr), type);
    }
    case NodeType::kVariable: return validate_type(eval_variable_node(dot, n, kNoArgs, nullptr), type);
    case NodeType::kPipe: return validate_type(eval_pipeline(dot, &n), type);
    case NodeType::kIdentifier: return validate_type(eval_function(dot, n, n, kNoArgs, nullptr), type);
    case NodeType::kChain: return validate_type(eval_chain_node(dot, n, kNoArgs, nullptr), type);
    default: break;
  }
  switch (type) {
    case ArgType::kString:
      at(&n);
      if (n.type == NodeType::kString) return Value::string(n.value);
      errorf("expected string; found " + n.to_string());
    case ArgType::kAny:
    case ArgType::kValue: return eval_empty_interface(dot, n);
    case ArgType::kNone: break;
  }
  errorf("can't handle " + n.to_string() + " for arg of type " + type_name(type));
}

Value State::eval_empty_interface(const Value& dot, const Node& n) {
  at(&n);
  static const std::vector<NodePtr> kNoArgs;
  switch (n.type) {
    case NodeType::kBool: return Value::boolean(n.boolean);
    case NodeType::kDot: return dot;
    case NodeType::kField: return eval_field_node(dot, n, kNoArgs, nullptr);
    case NodeType::kIdentifier: return eval_function(dot, n, n, kNoArgs, nullptr);
    case NodeType::kNil: errorf("evalEmptyInterface: nil (can't happen)");
    case NodeType::kNumber: return ideal_constant(n);
    case NodeType::kString: return Value::string(n.value);
    case NodeType::kVariable: return eval_variable_node(dot, n, kNoArgs, nullptr);
    case NodeType::kPipe: return eval_pipeline(dot, &n);
    default: break;
  }
  errorf("can't handle assignment of " + n.to_string() + " to empty interface argument");
}

void State::print_value(const Node& node, const Value& v_in) {
  at(&node);
  Value v = v_in;
  if (v.kind() == Kind::kPointer) {
    bool nil = false;
    Value target = indirect(v, &nil);
    if (!nil) v = target;
  }
  if (!v.valid()) {
    write("<no value>");
    return;
  }
  write(go_sprint({v}));
}

}  // namespace

Status execute_template(const TreeSet& templates, const std::string& name, const Node& root,
                        const Value& data, const ExecOptions& options, std::string* out) {
  ExecCounters own_counters;
  Shared shared{&templates, &options, out, "", options.counters ? options.counters : &own_counters};
  auto found = templates.find(name);
  const Tree* tree = found != templates.end() ? found->second.get() : root.tree;
  if (tree != nullptr && tree->root && tree->root->tree != nullptr) tree = tree->root->tree;
  State state(&shared, name, tree, 0);
  state.vars.push("$", data);
  try {
    state.walk(data, root);
  } catch (const ExecFailure& failure) {
    return Error(ErrorCode::kInvalidArgument, failure.message);
  }
  return ok_status();
}

}  // namespace sinter::chat::gotemplate
