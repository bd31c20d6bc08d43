#include "chat/jinja/value.h"

#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {

Value Value::undefined(std::string reason, bool unsafe) {
  return Value(Undefined{std::make_shared<const std::string>(std::move(reason)), unsafe});
}

Value Value::list(std::vector<Value> items) {
  auto list = std::make_shared<List>();
  list->items = std::move(items);
  return Value(std::move(list));
}

Value Value::tuple(std::vector<Value> items) { return sequence(std::move(items), ListFlavor::kTuple); }

Value Value::sequence(std::vector<Value> items, ListFlavor flavor) {
  auto list = std::make_shared<List>();
  list->items = std::move(items);
  list->flavor = flavor;
  return Value(std::move(list));
}

Value Value::dict() { return Value(std::make_shared<Dict>()); }

double Value::as_float() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

std::string Value::undefined_reason() const {
  const auto& reason = std::get<Undefined>(data_).reason;
  return reason ? *reason : std::string("value is undefined");
}

bool Value::same_object(const Value& other) const {
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kBool: return as_bool() == other.as_bool();
    case Kind::kInt: return as_int() == other.as_int();
    case Kind::kFloat: return as_float() == other.as_float();
    case Kind::kString: return string_ptr() == other.string_ptr() || as_string() == other.as_string();
    case Kind::kList: return list_ptr() == other.list_ptr();
    case Kind::kDict: return dict_ptr() == other.dict_ptr();
    case Kind::kCallable: return callable_ptr() == other.callable_ptr();
    case Kind::kObject: return object_ptr() == other.object_ptr();
  }
  return false;
}

const Value* Dict::find(const Value& key) const {
  if (key.is_string()) return find(std::string_view(key.as_string()));
  auto [begin, end] = other_index_.equal_range(hash_value(key));
  for (auto it = begin; it != end; ++it) {
    const auto& [k, v] = entries_[it->second];
    if (equals(k, key)) return &v;
  }
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  auto it = string_index_.find(std::string(key));
  return it == string_index_.end() ? nullptr : &entries_[it->second].second;
}

void Dict::set(const Value& key, Value value) {
  if (key.is_string()) {
    auto [it, inserted] = string_index_.emplace(key.as_string(), entries_.size());
    if (!inserted) {
      entries_[it->second].second = std::move(value);
      return;
    }
    entries_.emplace_back(key, std::move(value));
    return;
  }
  size_t hash = hash_value(key);
  auto [begin, end] = other_index_.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    auto& [k, v] = entries_[it->second];
    if (equals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  other_index_.emplace(hash, entries_.size());
  entries_.emplace_back(key, std::move(value));
}

bool Dict::erase(const Value& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first.is_string() == key.is_string() && equals(it->first, key)) {
      entries_.erase(it);
      string_index_.clear();
      other_index_.clear();
      for (size_t i = 0; i < entries_.size(); ++i) {
        const Value& k = entries_[i].first;
        if (k.is_string()) {
          string_index_.emplace(k.as_string(), i);
        } else {
          other_index_.emplace(hash_value(k), i);
        }
      }
      return true;
    }
  }
  return false;
}

void Object::set_attribute(const std::string&, Value) {}

}  // namespace sinter::chat::jinja
