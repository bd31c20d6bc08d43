#include "chat/jinja/objects.h"

#include "chat/jinja/arguments.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

Value missing_attribute(const std::string& type_repr, std::string_view name) {
  return Value::undefined(concat(py::repr(type_repr), " has no attribute ", py::repr(name)));
}

}  // namespace

Value make_function(std::string name, BuiltinFunction::Function function) {
  return Value(CallablePtr(std::make_shared<BuiltinFunction>(std::move(name), std::move(function))));
}

Result<Value> MacroFunction::call(Interpreter& interpreter, CallArgs args) const {
  return interpreter.call_macro(*macro_, closure_, std::move(args));
}

Value Namespace::attribute(std::string_view name) const {
  if (const Value* value = attributes_->find(name)) return *value;
  return missing_attribute("jinja2.utils.Namespace object", name);
}

std::string Namespace::repr() const { return "<Namespace " + jinja::repr(Value(attributes_)) + ">"; }

Value LoopObject::attribute(std::string_view name) const {
  auto length = static_cast<int64_t>(items_.size());
  auto index0 = static_cast<int64_t>(index0_);
  if (name == "index") return Value(index0 + 1);
  if (name == "index0") return Value(index0);
  if (name == "revindex") return Value(length - index0);
  if (name == "revindex0") return Value(length - index0 - 1);
  if (name == "first") return Value(index0 == 0);
  if (name == "last") return Value(index0 == length - 1);
  if (name == "length") return Value(length);
  if (name == "depth") return Value(int64_t{depth0_} + 1);
  if (name == "depth0") return Value(int64_t{depth0_});
  if (name == "previtem")
    return index0 > 0 ? items_[index0_ - 1] : Value::undefined("there is no previous item");
  if (name == "nextitem") {
    return index0 + 1 < length ? items_[index0_ + 1] : Value::undefined("there is no next item");
  }
  if (name == "cycle") {
    auto self = std::static_pointer_cast<const LoopObject>(shared_from_this());
    return make_function("cycle", [self](Interpreter&, CallArgs args) -> Result<Value> {
      if (args.positional.empty()) return type_error("no items for cycling given");
      return args.positional[self->index0_ % args.positional.size()];
    });
  }
  if (name == "changed") {
    auto self = std::static_pointer_cast<const LoopObject>(shared_from_this());
    return make_function("changed", [self](Interpreter&, CallArgs args) -> Result<Value> {
      const std::vector<Value>& values = args.positional;
      bool same = self->last_changed_ && self->last_changed_->size() == values.size();
      for (size_t i = 0; same && i < values.size(); ++i) same = equals((*self->last_changed_)[i], values[i]);
      if (same) return Value(false);
      self->last_changed_ = values;
      return Value(true);
    });
  }
  return missing_attribute("jinja2.runtime.LoopContext object", name);
}

std::string LoopObject::repr() const { return concat("<LoopContext ", index0_ + 1, "/", items_.size(), ">"); }

Result<Value> LoopObject::call_recursive(Interpreter& interpreter, const Value& items) const {
  if (!loop_ || !loop_->recursive || !scope_) {
    return type_error("The loop must have the 'recursive' marker to be called recursively.");
  }
  return interpreter.call_recursive_loop(*loop_, scope_, items, depth0_ + 1);
}

Value Cycler::attribute(std::string_view name) const {
  auto self = std::static_pointer_cast<const Cycler>(shared_from_this());
  if (name == "current") {
    return items_.empty() ? Value::undefined("empty cycler") : items_[position_ % items_.size()];
  }
  if (name == "next") {
    return make_function("next", [self](Interpreter&, CallArgs args) -> Result<Value> {
      SINTER_TRY(expect_no_arguments("next", args));
      if (self->items_.empty()) return value_error("cycler has no items");
      size_t index = self->position_ % self->items_.size();
      self->position_ = (index + 1) % self->items_.size();
      return Result<Value>(self->items_[index]);
    });
  }
  if (name == "reset") {
    return make_function("reset", [self](Interpreter&, CallArgs args) -> Result<Value> {
      SINTER_TRY(expect_no_arguments("reset", args));
      self->position_ = 0;
      return Value::none();
    });
  }
  return missing_attribute("jinja2.utils.Cycler object", name);
}

}  // namespace sinter::chat::jinja
