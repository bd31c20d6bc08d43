#include "chat/jinja/interpreter.h"

#include "chat/jinja/attributes.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/objects.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"
#include "core/memory_budget.h"

namespace sinter::chat::jinja {

const Value* Scope::find_here(std::string_view name) const {
  if (!index_.empty()) {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &variables_[it->second].second;
  }
  for (const auto& [key, value] : variables_) {
    if (key == name) return &value;
  }
  return nullptr;
}

const Value* Scope::find(std::string_view name) const {
  for (const Scope* scope = this; scope; scope = scope->parent_.get()) {
    if (const Value* value = scope->find_here(name)) return value;
  }
  return nullptr;
}

void Scope::set(const std::string& name, Value value) {
  if (Value* existing = const_cast<Value*>(find_here(name))) {
    *existing = std::move(value);
    return;
  }
  variables_.emplace_back(name, std::move(value));
  if (variables_.size() == kIndexFrom) {
    for (size_t i = 0; i < variables_.size(); ++i) index_.emplace(variables_[i].first, i);
  } else if (variables_.size() > kIndexFrom) {
    index_.emplace(variables_.back().first, variables_.size() - 1);
  }
}

Interpreter::Interpreter(const RenderOptions& options) : options_(options), budget_(options_.limits) {}

Interpreter::~Interpreter() {
  // Break the reference cycles a render can leave (a macro in the scope it closes over, a
  // namespace holding itself), so that everything the render made is freed.
  for (const auto& object : tracked_) object->clear();
  for (const auto& scope : tracked_scopes_) scope->clear();
}

Result<std::string> Interpreter::render(const Body& body, const ScopePtr& globals) {
  std::string out;
  auto root = std::make_shared<Scope>(globals);
  track(root);
  auto flow = exec_body(body, root, &out);
  if (!flow) {
    if (failure_location_) return locate(flow.error(), *failure_location_);
    return std::move(flow).error();
  }
  SINTER_TRY(budget_.check());  // a failure recorded after the last step (repr() over the cap)
  return out;
}

Status Interpreter::count_iteration() {
  if (++iterations_ > options_.limits.max_loop_iterations) {
    return limit_error(concat("more than ", options_.limits.max_loop_iterations, " loop iterations"));
  }
  return ok_status();
}

Status Interpreter::check_size(size_t bytes) const {
  if (bytes > options_.limits.max_output_bytes) {
    return limit_error(
        concat("a value or the output would pass ", options_.limits.max_output_bytes, " bytes"));
  }
  return ok_status();
}

Status Interpreter::append_output(std::string* out, std::string_view text) {
  SINTER_TRY(check_size(out->size() + text.size()));
  // Output of nested macro calls and blocks is buffered at every level: count it all.
  SINTER_TRY(count_built(text.size()));
  out->append(text);
  return ok_status();
}

Status Interpreter::charge(const Value& built) {
  size_t bytes = 0;
  if (built.is_string()) {
    bytes = built.as_string().size();
  } else if (built.is_sequence()) {
    bytes = sizeof(Value) * built.items().size();
  } else if (built.is_dict()) {
    bytes = 2 * sizeof(Value) * built.as_dict().size();
  } else {
    return ok_status();
  }
  SINTER_TRY(check_size(bytes));
  return count_built(bytes);
}

Status Interpreter::count_built(size_t bytes) {
  built_bytes_ += bytes;
  if (built_bytes_ > options_.limits.max_built_bytes) {
    return limit_error(concat("the render built more than ", options_.limits.max_built_bytes, " bytes"));
  }
  // The request the render serves pays for what it builds: many renders at once stop at the
  // server's budget, not at many times the limit of one.
  return charge_current_account(bytes);
}

// --- statements -----------------------------------------------------------------------------

Result<Interpreter::Flow> Interpreter::exec_body(const Body& body, const ScopePtr& scope, std::string* out) {
  for (const auto& stmt : body) {
    SINTER_ASSIGN(Flow flow, exec(*stmt, scope, out));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

// Every statement is a step of the budget and a level of nesting.
Result<Interpreter::Flow> Interpreter::exec(const Stmt& stmt, const ScopePtr& scope, std::string* out) {
  Status entered = budget_.step();
  if (entered) entered = budget_.enter();
  if (!entered) {
    if (!failure_location_) failure_location_ = stmt.where;
    return std::move(entered).error();
  }
  auto flow = exec_node(stmt, scope, out);
  budget_.leave();
  return flow;
}

Result<Interpreter::Flow> Interpreter::exec_node(const Stmt& stmt, const ScopePtr& scope, std::string* out) {
  auto fail = [&](Error error) -> Result<Flow> {
    if (!failure_location_) failure_location_ = stmt.where;
    return error;
  };
  switch (stmt.kind) {
    case StmtKind::kText: {
      Status status = append_output(out, static_cast<const TextStmt&>(stmt).text);
      if (!status) return fail(std::move(status).error());
      return Flow::kNormal;
    }
    case StmtKind::kOutput: {
      SINTER_ASSIGN(Value value, eval(*static_cast<const OutputStmt&>(stmt).expr, *scope));
      Status status = append_output(out, to_str(value));
      if (!status) return fail(std::move(status).error());
      return Flow::kNormal;
    }
    case StmtKind::kIf: {
      const auto& node = static_cast<const IfStmt&>(stmt);
      for (const auto& [test, body] : node.branches) {
        SINTER_ASSIGN(Value condition, eval(*test, *scope));
        if (truthy(condition)) return exec_body(body, scope, out);
      }
      return exec_body(node.otherwise, scope, out);
    }
    case StmtKind::kFor: return exec_for(static_cast<const ForStmt&>(stmt), scope, out, nullptr, 0);
    case StmtKind::kSet: {
      Status status = exec_set(static_cast<const SetStmt&>(stmt), scope);
      if (!status) return fail(std::move(status).error());
      return Flow::kNormal;
    }
    case StmtKind::kSetBlock: {
      const auto& node = static_cast<const SetBlockStmt&>(stmt);
      std::string text;
      SINTER_TRY(exec_body(node.body, std::make_shared<Scope>(scope), &text));
      Value value(std::move(text));
      if (node.filter) {
        SINTER_ASSIGN(value, eval_filter(static_cast<const FilterExpr&>(*node.filter), *scope, &value));
      }
      Status status = assign(*node.target, value, *scope);
      if (!status) return fail(std::move(status).error());
      return Flow::kNormal;
    }
    case StmtKind::kMacro: {
      const auto& node = static_cast<const MacroStmt&>(stmt);
      track(scope);
      scope->set(node.name, Value(CallablePtr(std::make_shared<MacroFunction>(&node, scope))));
      return Flow::kNormal;
    }
    case StmtKind::kCallBlock: return exec_call_block(static_cast<const CallBlockStmt&>(stmt), scope, out);
    case StmtKind::kFilterBlock: {
      const auto& node = static_cast<const FilterBlockStmt&>(stmt);
      std::string text;
      SINTER_TRY(exec_body(node.body, std::make_shared<Scope>(scope), &text));
      Value body(std::move(text));
      SINTER_ASSIGN(Value filtered, eval_filter(static_cast<const FilterExpr&>(*node.filter), *scope, &body));
      Status status = append_output(out, to_str(filtered));
      if (!status) return fail(std::move(status).error());
      return Flow::kNormal;
    }
    case StmtKind::kWith: {
      const auto& node = static_cast<const WithStmt&>(stmt);
      auto inner = std::make_shared<Scope>(scope);
      for (const auto& [target, value_expr] : node.assignments) {
        SINTER_ASSIGN(Value value, eval(*value_expr, *scope));
        Status status = assign(*target, value, *inner);
        if (!status) return fail(std::move(status).error());
      }
      return exec_body(node.body, inner, out);
    }
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
    case StmtKind::kScope:
      return exec_body(static_cast<const ScopeStmt&>(stmt).body, std::make_shared<Scope>(scope), out);
  }
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_for(const ForStmt& stmt, const ScopePtr& scope, std::string* out,
                                                const Value* given_items, int depth) {
  auto fail = [&](Error error) -> Result<Flow> {
    if (!failure_location_) failure_location_ = stmt.where;
    return error;
  };
  Value iterable;
  if (given_items) {
    iterable = *given_items;
  } else {
    SINTER_ASSIGN(iterable, eval(*stmt.iterable, *scope));
  }
  auto listed = iterate(iterable);
  if (!listed) return fail(std::move(listed).error());
  std::vector<Value> items = std::move(listed).value();
  if (stmt.filter) {
    std::vector<Value> kept;
    for (auto& item : items) {
      Status counted = count_iteration();
      if (!counted) return fail(std::move(counted).error());
      auto probe = std::make_shared<Scope>(scope);
      Status status = assign(*stmt.target, item, *probe);
      if (!status) return fail(std::move(status).error());
      SINTER_ASSIGN(Value keep, eval(*stmt.filter, *probe));
      if (truthy(keep)) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    SINTER_TRY(exec_body(stmt.otherwise, std::make_shared<Scope>(scope), out));
    return Flow::kNormal;
  }
  auto loop = std::make_shared<LoopObject>(items, depth, &stmt, scope);
  track(loop);
  Value loop_value{ObjectPtr(loop)};
  for (size_t i = 0; i < items.size(); ++i) {
    Status counted = count_iteration();
    if (!counted) return fail(std::move(counted).error());
    loop->set_index(i);
    auto iteration = std::make_shared<Scope>(scope);
    iteration->set("loop", loop_value);
    Status status = assign(*stmt.target, items[i], *iteration);
    if (!status) return fail(std::move(status).error());
    SINTER_ASSIGN(Flow flow, exec_body(stmt.body, iteration, out));
    if (flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Result<Value> Interpreter::call_recursive_loop(const ForStmt& loop, const ScopePtr& scope, const Value& items,
                                               int depth) {
  if (depth > options_.limits.max_call_depth) {
    return limit_error(concat("recursive loop deeper than ", options_.limits.max_call_depth, " levels"));
  }
  std::string text;
  SINTER_TRY(exec_for(loop, scope, &text, &items, depth));
  return Value(std::move(text));
}

Status Interpreter::exec_set(const SetStmt& stmt, const ScopePtr& scope) {
  SINTER_ASSIGN(Value value, eval(*stmt.value, *scope));
  return assign(*stmt.target, value, *scope);
}

Status Interpreter::assign(const Expr& target, const Value& value, Scope& scope) {
  switch (target.kind) {
    case ExprKind::kName: scope.set(static_cast<const NameExpr&>(target).name, value); return ok_status();
    case ExprKind::kNamespaceRef: {
      const auto& ref = static_cast<const NamespaceRefExpr&>(target);
      const Value* object = scope.find(ref.name);
      if (!object || !object->is_object() || !object->as_object().is_namespace()) {
        return Error(ErrorCode::kInvalidArgument,
                     "TemplateRuntimeError: cannot assign attribute on non-namespace object");
      }
      SINTER_TRY(check_nesting(value));
      object->as_object().set_attribute(ref.attribute, value);
      return ok_status();
    }
    case ExprKind::kTuple: {
      const auto& targets = static_cast<const SequenceExpr&>(target).items;
      SINTER_ASSIGN(std::vector<Value> values, iterate(value));
      if (values.size() < targets.size()) {
        return value_error(
            concat("not enough values to unpack (expected ", targets.size(), ", got ", values.size(), ")"));
      }
      if (values.size() > targets.size()) {
        return value_error(concat("too many values to unpack (expected ", targets.size(), ")"));
      }
      for (size_t i = 0; i < targets.size(); ++i) SINTER_TRY(assign(*targets[i], values[i], scope));
      return ok_status();
    }
    default: return Error(ErrorCode::kInternal, "invalid assignment target");
  }
}

Result<Interpreter::Flow> Interpreter::exec_call_block(const CallBlockStmt& stmt, const ScopePtr& scope,
                                                       std::string* out) {
  const auto& call = static_cast<const CallExpr&>(*stmt.call);
  SINTER_ASSIGN(Value callee, eval(*call.callee, *scope));
  SINTER_ASSIGN(CallArgs args, eval_args(call.args, *scope));
  track(scope);
  args.keyword.emplace_back("caller", Value(CallablePtr(std::make_shared<MacroFunction>(&stmt, scope))));
  auto result = this->call(callee, std::move(args));
  if (!result) {
    if (!failure_location_) failure_location_ = call.where;
    return std::move(result).error();
  }
  Status status = append_output(out, to_str(*result));
  if (!status) {
    if (!failure_location_) failure_location_ = stmt.where;
    return std::move(status).error();
  }
  return Flow::kNormal;
}

Result<Value> Interpreter::call_macro(const MacroStmt& macro, const ScopePtr& closure, CallArgs args) {
  if (call_depth_ >= options_.limits.max_call_depth) {
    return limit_error(concat("macro calls nested deeper than ", options_.limits.max_call_depth, " levels"));
  }
  auto scope = std::make_shared<Scope>(closure);
  const auto& parameters = macro.parameters;
  std::vector<bool> bound(parameters.size(), false);
  std::vector<Value> extra_positional;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i < parameters.size()) {
      scope->set(parameters[i].name, std::move(args.positional[i]));
      bound[i] = true;
    } else {
      extra_positional.push_back(std::move(args.positional[i]));
    }
  }
  if (!extra_positional.empty() && !macro.uses_varargs) {
    return type_error(
        concat("macro '", macro.name, "' takes not more than ", parameters.size(), " argument(s)"));
  }
  auto extra_keywords = std::make_shared<Dict>();
  bool has_caller = false;
  for (auto& [key, value] : args.keyword) {
    size_t index = 0;
    while (index < parameters.size() && parameters[index].name != key) ++index;
    if (index < parameters.size()) {
      if (bound[index])
        return type_error(concat("macro '", macro.name, "' got multiple values for argument '", key, "'"));
      scope->set(key, std::move(value));
      bound[index] = true;
    } else if (key == "caller" && macro.uses_caller) {
      scope->set("caller", std::move(value));
      has_caller = true;
    } else if (macro.uses_kwargs) {
      extra_keywords->set(Value(key), std::move(value));
    } else {
      return type_error(concat("macro '", macro.name, "' takes no keyword argument '", key, "'"));
    }
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (bound[i]) continue;
    if (parameters[i].default_value) {
      SINTER_ASSIGN(Value value, eval(*parameters[i].default_value, *scope));
      scope->set(parameters[i].name, std::move(value));
    } else {
      scope->set(parameters[i].name,
                 Value::undefined(concat("parameter '", parameters[i].name, "' was not provided")));
    }
  }
  if (macro.uses_varargs) scope->set("varargs", Value::tuple(std::move(extra_positional)));
  if (macro.uses_kwargs) scope->set("kwargs", Value(std::move(extra_keywords)));
  if (macro.uses_caller && !has_caller) scope->set("caller", Value::undefined("No caller defined"));
  ++call_depth_;
  std::string text;
  auto flow = exec_body(macro.body, scope, &text);
  --call_depth_;
  if (!flow) return std::move(flow).error();
  return Value(std::move(text));
}

// --- expressions ----------------------------------------------------------------------------

// Every expression is a step of the budget and a level of nesting.
Result<Value> Interpreter::eval(const Expr& expr, Scope& scope) {
  Status entered = budget_.step();
  if (entered) entered = budget_.enter();
  if (!entered) {
    if (!failure_location_) failure_location_ = expr.where;
    return std::move(entered).error();
  }
  auto result = eval_node(expr, scope);
  budget_.leave();
  if (result) {
    switch (expr.kind) {
      case ExprKind::kName:
      case ExprKind::kLiteral:
      case ExprKind::kGetAttr:
      case ExprKind::kCompare:
      case ExprKind::kNot:
      case ExprKind::kTest:
      case ExprKind::kConditional: break;  // these pass on values, they build none
      case ExprKind::kGetItem:
        if (static_cast<const GetItemExpr&>(expr).index->kind != ExprKind::kSlice) break;
        [[fallthrough]];
      default: {
        Status charged = charge(*result);
        if (!charged) result = std::move(charged).error();
      }
    }
  }
  if (!result && !failure_location_) failure_location_ = expr.where;
  return result;
}

Result<CallArgs> Interpreter::eval_args(const CallArguments& args, Scope& scope) {
  CallArgs out;
  for (const auto& arg : args.positional) {
    SINTER_ASSIGN(Value value, eval(*arg, scope));
    out.positional.push_back(std::move(value));
  }
  for (const auto& [key, arg] : args.keyword) {
    SINTER_ASSIGN(Value value, eval(*arg, scope));
    out.keyword.emplace_back(key, std::move(value));
  }
  if (args.star_args) {
    SINTER_ASSIGN(Value extra, eval(*args.star_args, scope));
    SINTER_ASSIGN(std::vector<Value> items, iterate(extra));
    for (auto& item : items) out.positional.push_back(std::move(item));
  }
  if (args.star_kwargs) {
    SINTER_ASSIGN(Value extra, eval(*args.star_kwargs, scope));
    if (!extra.is_dict())
      return type_error(concat("argument after ** must be a mapping, not ", type_name(extra)));
    for (const auto& [key, value] : extra.as_dict().entries()) {
      if (!key.is_string()) return type_error("keywords must be strings");
      out.keyword.emplace_back(key.as_string(), value);
    }
  }
  return out;
}

Result<Value> Interpreter::call(const Value& callee, CallArgs args) {
  if (callee.is_callable()) return callee.as_callable().call(*this, std::move(args));
  if (callee.is_undefined()) return undefined_failure(callee);
  if (callee.is_object()) {
    if (auto* loop = dynamic_cast<const LoopObject*>(&callee.as_object())) {
      if (args.positional.size() != 1 || !args.keyword.empty())
        return type_error("loop() takes one argument");
      return loop->call_recursive(*this, args.positional[0]);
    }
  }
  return type_error(concat("'", type_name(callee), "' object is not callable"));
}

Result<Value> Interpreter::eval_compare(const CompareExpr& expr, Scope& scope) {
  SINTER_ASSIGN(Value left, eval(*expr.first, scope));
  for (const auto& operand : expr.rest) {
    SINTER_ASSIGN(Value right, eval(*operand.value, scope));
    bool result = false;
    switch (operand.op) {
      case CompareOp::kEq: result = equals(left, right); break;
      case CompareOp::kNe: result = !equals(left, right); break;
      case CompareOp::kLt: {
        SINTER_ASSIGN(result, ordered(left, right, Ordering::kLess));
        break;
      }
      case CompareOp::kLe: {
        SINTER_ASSIGN(result, ordered(left, right, Ordering::kLessEqual));
        break;
      }
      case CompareOp::kGt: {
        SINTER_ASSIGN(result, ordered(left, right, Ordering::kGreater));
        break;
      }
      case CompareOp::kGe: {
        SINTER_ASSIGN(result, ordered(left, right, Ordering::kGreaterEqual));
        break;
      }
      case CompareOp::kIn: {
        SINTER_ASSIGN(result, contains(right, left));
        break;
      }
      case CompareOp::kNotIn: {
        SINTER_ASSIGN(bool found, contains(right, left));
        result = !found;
        break;
      }
    }
    if (!result) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Result<Value> Interpreter::eval_filter(const FilterExpr& expr, Scope& scope, const Value* body) {
  Value input;
  if (expr.input) {
    if (expr.input->kind == ExprKind::kFilter) {
      SINTER_ASSIGN(input, eval_filter(static_cast<const FilterExpr&>(*expr.input), scope, body));
      Status charged = charge(input);  // the value one filter of a chain passes to the next
      if (!charged) {
        if (!failure_location_) failure_location_ = expr.input->where;
        return std::move(charged).error();
      }
    } else {
      SINTER_ASSIGN(input, eval(*expr.input, scope));
    }
  } else if (body) {
    input = *body;
  }
  SINTER_ASSIGN(CallArgs args, eval_args(expr.args, scope));
  auto result = apply_filter(expr.name, input, std::move(args));
  if (!result && !failure_location_) failure_location_ = expr.where;
  return result;
}

Result<Value> Interpreter::eval_slice(const Value& object, const SliceExpr& slice, Scope& scope) {
  std::optional<int64_t> bounds[3];
  const ExprPtr* parts[3] = {&slice.start, &slice.stop, &slice.step};
  bool invalid = false;
  for (int i = 0; i < 3; ++i) {
    if (!*parts[i]) continue;
    SINTER_ASSIGN(Value bound, eval(**parts[i], scope));
    if (bound.is_none()) continue;
    if (!bound.is_integral()) {
      invalid = true;
      continue;
    }
    bounds[i] = bound.as_int();
  }
  if (object.is_undefined()) return undefined_failure(object);
  bool sliceable = object.is_string() || object.is_list() || object.is_tuple() ||
                   (object.is_sequence() && object.flavor() == ListFlavor::kRange);
  if (invalid || !sliceable)
    return Value::undefined(concat(object_type_repr(object), " has no element slice(...)"));
  int64_t step = bounds[2].value_or(1);
  if (step == 0) return value_error("slice step cannot be zero");
  if (object.is_string()) {
    std::u32string text = py::decode(object.as_string());
    auto indices = py::adjust_slice(static_cast<int64_t>(text.size()), bounds[0], bounds[1], step);
    std::u32string out;
    for (int64_t i = 0, at = indices.start; i < indices.count; ++i, at += step)
      out += text[static_cast<size_t>(at)];
    return Value(py::encode(out));
  }
  const auto& items = object.items();
  auto indices = py::adjust_slice(static_cast<int64_t>(items.size()), bounds[0], bounds[1], step);
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(indices.count));
  for (int64_t i = 0, at = indices.start; i < indices.count; ++i, at += step)
    out.push_back(items[static_cast<size_t>(at)]);
  return Value::sequence(std::move(out), object.is_tuple() ? ListFlavor::kTuple : ListFlavor::kList);
}

Result<Value> Interpreter::eval_node(const Expr& expr, Scope& scope) {
  switch (expr.kind) {
    case ExprKind::kLiteral: return static_cast<const LiteralExpr&>(expr).value;
    case ExprKind::kName: {
      const auto& name = static_cast<const NameExpr&>(expr).name;
      if (const Value* value = scope.find(name)) return *value;
      return Value::undefined(concat(py::repr(name), " is undefined"));
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      for (const auto& item : static_cast<const SequenceExpr&>(expr).items) {
        SINTER_ASSIGN(Value value, eval(*item, scope));
        items.push_back(std::move(value));
      }
      return Value::sequence(std::move(items),
                             expr.kind == ExprKind::kTuple ? ListFlavor::kTuple : ListFlavor::kList);
    }
    case ExprKind::kDict: {
      auto dict = std::make_shared<Dict>();
      for (const auto& [key_expr, value_expr] : static_cast<const DictExpr&>(expr).items) {
        SINTER_ASSIGN(Value key, eval(*key_expr, scope));
        SINTER_TRY(require_hashable(key));
        SINTER_ASSIGN(Value value, eval(*value_expr, scope));
        dict->set(key, std::move(value));
      }
      return Value(std::move(dict));
    }
    case ExprKind::kGetAttr: {
      const auto& node = static_cast<const GetAttrExpr&>(expr);
      SINTER_ASSIGN(Value object, eval(*node.object, scope));
      return jinja::get_attribute(*this, object, node.name);
    }
    case ExprKind::kGetItem: {
      const auto& node = static_cast<const GetItemExpr&>(expr);
      SINTER_ASSIGN(Value object, eval(*node.object, scope));
      if (node.index->kind == ExprKind::kSlice) {
        return eval_slice(object, static_cast<const SliceExpr&>(*node.index), scope);
      }
      SINTER_ASSIGN(Value key, eval(*node.index, scope));
      return jinja::get_item(*this, object, key);
    }
    case ExprKind::kSlice: return Error(ErrorCode::kInternal, "slice outside a subscript");
    case ExprKind::kCall: {
      const auto& node = static_cast<const CallExpr&>(expr);
      SINTER_ASSIGN(Value callee, eval(*node.callee, scope));
      SINTER_ASSIGN(CallArgs args, eval_args(node.args, scope));
      return call(callee, std::move(args));
    }
    case ExprKind::kFilter: return eval_filter(static_cast<const FilterExpr&>(expr), scope, nullptr);
    case ExprKind::kTest: {
      const auto& node = static_cast<const TestExpr&>(expr);
      SINTER_ASSIGN(Value value, eval(*node.input, scope));
      SINTER_ASSIGN(CallArgs args, eval_args(node.args, scope));
      SINTER_ASSIGN(bool result, apply_test(node.name, value, std::move(args)));
      return Value(result);
    }
    case ExprKind::kNot: {
      SINTER_ASSIGN(Value value, eval(*static_cast<const UnaryExpr&>(expr).operand, scope));
      return Value(!truthy(value));
    }
    case ExprKind::kNegate: {
      SINTER_ASSIGN(Value value, eval(*static_cast<const UnaryExpr&>(expr).operand, scope));
      return negate(value);
    }
    case ExprKind::kPlus: {
      SINTER_ASSIGN(Value value, eval(*static_cast<const UnaryExpr&>(expr).operand, scope));
      return unary_plus(value);
    }
    case ExprKind::kBinary: {
      const auto& node = static_cast<const BinaryExpr&>(expr);
      SINTER_ASSIGN(Value left, eval(*node.left, scope));
      if (node.op == BinaryOp::kAnd) return truthy(left) ? eval(*node.right, scope) : Result<Value>(left);
      if (node.op == BinaryOp::kOr) return truthy(left) ? Result<Value>(left) : eval(*node.right, scope);
      SINTER_ASSIGN(Value right, eval(*node.right, scope));
      return binary_operation(node.op, left, right, options_.limits.max_output_bytes);
    }
    case ExprKind::kConcat: {
      std::string text;
      for (const auto& part : static_cast<const ConcatExpr&>(expr).parts) {
        SINTER_ASSIGN(Value value, eval(*part, scope));
        text += to_str(value);
        SINTER_TRY(check_size(text.size()));
      }
      return Value(std::move(text));
    }
    case ExprKind::kCompare: return eval_compare(static_cast<const CompareExpr&>(expr), scope);
    case ExprKind::kConditional: {
      const auto& node = static_cast<const ConditionalExpr&>(expr);
      SINTER_ASSIGN(Value test, eval(*node.test, scope));
      if (truthy(test)) return eval(*node.then, scope);
      if (node.otherwise) return eval(*node.otherwise, scope);
      return Value::undefined(concat("the inline if-expression on line ", expr.where.line,
                                     " evaluated to false and no else section was defined."));
    }
    case ExprKind::kNamespaceRef: return Error(ErrorCode::kInternal, "namespace reference outside {% set %}");
  }
  return Error(ErrorCode::kInternal, "unknown expression kind");
}

}  // namespace sinter::chat::jinja
