// The objects and callables of Jinja2's runtime that templates see: built-in functions and bound
// methods, macros, namespace(), the loop variable, cycler() and joiner().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/value.h"

namespace sinter::chat::jinja {

// A function implemented in C++: globals, bound methods of strings, lists and dicts, loop.cycle.
class BuiltinFunction : public Callable {
 public:
  using Function = std::function<Result<Value>(Interpreter&, CallArgs)>;
  BuiltinFunction(std::string name, Function function)
      : name_(std::move(name)), function_(std::move(function)) {}
  std::string name() const override { return name_; }
  Result<Value> call(Interpreter& interpreter, CallArgs args) const override {
    return function_(interpreter, std::move(args));
  }

 private:
  std::string name_;
  Function function_;
};

Value make_function(std::string name, BuiltinFunction::Function function);

// {% macro %} (or the body of a {% call %} block, named "caller") with the scope it was defined in.
class MacroFunction : public Callable {
 public:
  MacroFunction(const MacroStmt* macro, ScopePtr closure) : macro_(macro), closure_(std::move(closure)) {}
  std::string name() const override { return macro_->name; }
  bool is_macro() const override { return true; }
  Result<Value> call(Interpreter& interpreter, CallArgs args) const override;

 private:
  const MacroStmt* macro_;
  ScopePtr closure_;
};

// namespace(a=1): the one object whose attributes templates may assign.
class Namespace : public Object {
 public:
  std::string type_name() const override { return "Namespace"; }
  Value attribute(std::string_view name) const override;
  std::string repr() const override;
  bool is_namespace() const override { return true; }
  void set_attribute(const std::string& name, Value value) override {
    attributes_->set(Value(name), std::move(value));
  }
  void clear() override { attributes_->clear(); }
  const Dict& attributes() const { return *attributes_; }

 private:
  DictPtr attributes_ = std::make_shared<Dict>();
};

// The `loop` variable of a for loop.
class LoopObject : public Object, public std::enable_shared_from_this<LoopObject> {
 public:
  LoopObject(std::vector<Value> items, int depth0, const ForStmt* loop, ScopePtr scope)
      : items_(std::move(items)), depth0_(depth0), loop_(loop), scope_(std::move(scope)) {}
  void set_index(size_t index0) { index0_ = index0; }
  std::string type_name() const override { return "LoopContext"; }
  Value attribute(std::string_view name) const override;
  std::string repr() const override;
  void clear() override {
    items_.clear();
    scope_.reset();
    last_changed_.reset();
  }
  // loop(items) in a recursive loop.
  Result<Value> call_recursive(Interpreter& interpreter, const Value& items) const;

 private:
  std::vector<Value> items_;
  size_t index0_ = 0;
  int depth0_ = 0;
  const ForStmt* loop_;
  ScopePtr scope_;
  mutable std::optional<std::vector<Value>> last_changed_;
};

// cycler(a, b, c): .next(), .current, .reset().
class Cycler : public Object, public std::enable_shared_from_this<Cycler> {
 public:
  explicit Cycler(std::vector<Value> items) : items_(std::move(items)) {}
  std::string type_name() const override { return "Cycler"; }
  Value attribute(std::string_view name) const override;
  std::string repr() const override { return "<jinja2.utils.Cycler object>"; }
  void clear() override { items_.clear(); }

 private:
  std::vector<Value> items_;
  mutable size_t position_ = 0;
};

}  // namespace sinter::chat::jinja
