// The tree-walking evaluator: renders a parsed template with Jinja2's runtime semantics as
// Hugging Face configures them (ImmutableSandboxedEnvironment with the default Undefined).
//
// Scopes follow Jinja2: each loop iteration, macro call and {% with %} gets a fresh scope whose
// parent is the enclosing one, so `set` inside a loop is gone after the iteration while `set`
// inside an `if` is not. Macros keep a reference to the scope they were defined in.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/budget.h"
#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

struct RenderOptions {
  RenderLimits limits;  // budget.h
  // What strftime_now() formats; the current time when unset.
  std::optional<std::chrono::system_clock::time_point> now;
  // Jinja2's ImmutableSandboxedEnvironment forbids list.append, dict.update ... (as Hugging Face
  // does); true allows them, for templates written for other renderers.
  bool allow_mutation = false;
};

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}
  const Value* find(std::string_view name) const;
  void set(const std::string& name, Value value);
  const std::shared_ptr<Scope>& parent() const { return parent_; }
  void clear() {
    index_.clear();
    variables_.clear();
  }

 private:
  // Scopes are many and small (one per loop iteration and macro call): a list searched in order,
  // with an index by name once it grows (a template setting thousands of names stays linear).
  static constexpr size_t kIndexFrom = 16;
  const Value* find_here(std::string_view name) const;

  std::shared_ptr<Scope> parent_;
  std::vector<std::pair<std::string, Value>> variables_;
  std::unordered_map<std::string, size_t> index_;  // name → position in variables_
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  explicit Interpreter(const RenderOptions& options);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders `body` with `globals` (the caller's variables and the built-in functions) as the
  // outermost scope. Errors carry "line L, column C: " of the innermost failing node.
  Result<std::string> render(const Body& body, const ScopePtr& globals);

  const RenderOptions& options() const { return options_; }

  // For callables: a macro call renders its body with its arguments bound (a {% call %} block
  // passes its body as the keyword argument `caller`).
  Result<Value> call_macro(const MacroStmt& macro, const ScopePtr& closure, CallArgs args);
  // loop(items) in a recursive for loop.
  Result<Value> call_recursive_loop(const ForStmt& loop, const ScopePtr& scope, const Value& items,
                                    int depth);
  // Filters and tests by name, for map(), select(), selectattr() ...
  Result<Value> apply_filter(std::string_view name, const Value& input, CallArgs args);
  Result<bool> apply_test(std::string_view name, const Value& value, CallArgs args);
  Result<Value> call(const Value& callee, CallArgs args);

  // Called once per loop iteration; fails past the limit.
  Status count_iteration();
  // Fails when a string or list about to be built would pass the size limit.
  Status check_size(size_t bytes) const;
  // Counts a value that was built against max_built_bytes, and checks its own size.
  Status charge(const Value& built);
  // Adds bytes built to the render's total (max_built_bytes) and to the current request's
  // memory account (core/memory_budget.h).
  Status count_built(size_t bytes);
  // Objects that can hold references (namespaces) are cleared after the render, breaking cycles.
  void track(const ObjectPtr& object) { tracked_.push_back(object); }
  // Scopes that macros close over hold the macro itself: cleared after the render too.
  void track(const ScopePtr& scope) { tracked_scopes_.push_back(scope); }

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Result<Flow> exec_body(const Body& body, const ScopePtr& scope, std::string* out);
  Result<Flow> exec(const Stmt& stmt, const ScopePtr& scope, std::string* out);
  Result<Flow> exec_node(const Stmt& stmt, const ScopePtr& scope, std::string* out);
  Result<Flow> exec_for(const ForStmt& stmt, const ScopePtr& scope, std::string* out, const Value* items,
                        int depth);
  Status exec_set(const SetStmt& stmt, const ScopePtr& scope);
  Status assign(const Expr& target, const Value& value, Scope& scope);
  Result<Flow> exec_call_block(const CallBlockStmt& stmt, const ScopePtr& scope, std::string* out);

  Result<Value> eval(const Expr& expr, Scope& scope);
  Result<Value> eval_node(const Expr& expr, Scope& scope);
  Result<Value> eval_filter(const FilterExpr& expr, Scope& scope, const Value* body);
  Result<Value> eval_compare(const CompareExpr& expr, Scope& scope);
  Result<Value> eval_slice(const Value& object, const SliceExpr& slice, Scope& scope);
  Result<CallArgs> eval_args(const CallArguments& args, Scope& scope);
  Status append_output(std::string* out, std::string_view text);

  RenderOptions options_;
  RenderBudget budget_;  // the budget of this render on this thread while the interpreter lives
  int call_depth_ = 0;
  int64_t iterations_ = 0;
  size_t built_bytes_ = 0;
  std::optional<SourceLocation> failure_location_;
  std::vector<ObjectPtr> tracked_;
  std::vector<ScopePtr> tracked_scopes_;
};

}  // namespace sinter::chat::jinja
