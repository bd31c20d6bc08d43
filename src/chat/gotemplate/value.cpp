#include "chat/gotemplate/value.h"

#include <algorithm>
#include <unordered_map>

namespace sinter::chat::gotemplate {

const BasicTypes& basic_types() {
  static const BasicTypes kTypes;
  return kTypes;
}

Value Value::boolean(bool b) { return of_type(&basic_types().bool_t, b); }
Value Value::integer(int64_t i) { return of_type(&basic_types().int_t, i); }
Value Value::float64(double f) { return of_type(&basic_types().float64_t, f); }
Value Value::string(std::string s) { return of_type(&basic_types().string_t, std::move(s)); }

Value Value::of_type(const Type* type, bool b) {
  Value v;
  v.type_ = type;
  v.data_ = b;
  return v;
}

Value Value::of_type(const Type* type, int64_t i) {
  Value v;
  v.type_ = type;
  v.data_ = i;
  return v;
}

Value Value::of_type(const Type* type, double f) {
  Value v;
  v.type_ = type;
  v.data_ = f;
  return v;
}

Value Value::of_type(const Type* type, std::string s) {
  Value v;
  v.type_ = type;
  v.data_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::slice(const Type* type, std::vector<Value> items) {
  Value v;
  v.type_ = type;
  v.data_ = std::make_shared<const std::vector<Value>>(std::move(items));
  return v;
}

Value Value::nil(const Type* type) {
  Value v;
  v.type_ = type;
  return v;  // monostate payload: nil
}

Value Value::map(const Type* type, MapEntries entries, bool keep_order) {
  // Later duplicates win, at the first one's place (what decoding JSON into a map does).
  MapEntries unique;
  unique.reserve(entries.size());
  std::unordered_map<std::string, size_t> position;
  for (auto& entry : entries) {
    auto [it, inserted] = position.emplace(entry.first, unique.size());
    if (inserted) {
      unique.push_back(std::move(entry));
    } else {
      unique[it->second].second = std::move(entry.second);
    }
  }
  if (!keep_order) {
    std::sort(unique.begin(), unique.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  Value v;
  v.type_ = type;
  v.data_ = std::make_shared<const MapData>(MapData{std::move(unique), !keep_order});
  return v;
}

Value Value::structure(const Type* type, std::vector<Value> fields) {
  Value v;
  v.type_ = type;
  v.data_ = std::make_shared<const std::vector<Value>>(std::move(fields));
  return v;
}

Value Value::pointer_to(const Type* pointer_type, Value target) {
  Value v;
  v.type_ = pointer_type;
  v.data_ = std::make_shared<const Value>(std::move(target));
  return v;
}

Value Value::interface(const Type* interface_type, Value dynamic) {
  Value v;
  v.type_ = interface_type;
  if (dynamic.valid()) v.data_ = std::make_shared<const Value>(std::move(dynamic));
  return v;
}

Value Value::zero(const Type* type) {
  if (type == nullptr) return Value();
  switch (type->kind) {
    case Kind::kInvalid: return Value();
    case Kind::kBool: return of_type(type, false);
    case Kind::kInt:
    case Kind::kUint8: return of_type(type, int64_t{0});
    case Kind::kFloat: return of_type(type, 0.0);
    case Kind::kString: return of_type(type, std::string());
    case Kind::kStruct: {
      std::vector<Value> fields;
      fields.reserve(type->fields.size());
      for (const Field& f : type->fields) fields.push_back(zero(f.type));
      return structure(type, std::move(fields));
    }
    case Kind::kSlice:
    case Kind::kMap:
    case Kind::kPointer:
    case Kind::kInterface: return nil(type);
  }
  return Value();
}

bool Value::is_nil() const {
  switch (kind()) {
    case Kind::kSlice:
    case Kind::kMap:
    case Kind::kPointer:
    case Kind::kInterface: return std::holds_alternative<std::monostate>(data_);
    default: return false;
  }
}

const std::string& Value::as_string() const { return *std::get<StringPtr>(data_); }

size_t Value::len() const {
  if (is_nil()) return 0;
  switch (kind()) {
    case Kind::kString: return as_string().size();
    case Kind::kSlice:
      if (type_->is_bytes()) return as_string().size();
      return std::get<ListPtr>(data_)->size();
    case Kind::kMap: return std::get<MapPtr>(data_)->entries.size();
    default: return 0;
  }
}

Value Value::index(size_t i) const {
  if (type_->is_bytes()) {
    return of_type(type_->elem, int64_t{static_cast<unsigned char>(as_string()[i])});
  }
  return (*std::get<ListPtr>(data_))[i];
}

const MapEntries& Value::entries() const {
  static const MapEntries kEmpty;
  if (is_nil()) return kEmpty;
  return std::get<MapPtr>(data_)->entries;
}

const Value* Value::find(std::string_view key) const {
  if (is_nil()) return nullptr;
  const MapData& data = *std::get<MapPtr>(data_);
  if (data.sorted) {
    auto it = std::lower_bound(data.entries.begin(), data.entries.end(), key,
                               [](const auto& entry, std::string_view k) { return entry.first < k; });
    return it != data.entries.end() && it->first == key ? &it->second : nullptr;
  }
  for (const auto& [k, v] : data.entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

const Value& Value::field(size_t i) const { return (*std::get<ListPtr>(data_))[i]; }

const Value& Value::elem() const { return *std::get<BoxPtr>(data_); }

bool Value::same_payload(const Value& other) const {
  if (data_.index() != other.data_.index()) return false;
  if (auto* a = std::get_if<MapPtr>(&data_)) return *a == std::get<MapPtr>(other.data_);
  if (auto* a = std::get_if<BoxPtr>(&data_)) return *a == std::get<BoxPtr>(other.data_);
  if (auto* a = std::get_if<ListPtr>(&data_)) return *a == std::get<ListPtr>(other.data_);
  return std::holds_alternative<std::monostate>(data_);
}

Value indirect(const Value& v, bool* is_nil) {
  Value cur = v;
  while (cur.kind() == Kind::kPointer || cur.kind() == Kind::kInterface) {
    if (cur.is_nil()) {
      *is_nil = true;
      return cur;
    }
    Value next = cur.elem();
    cur = std::move(next);
  }
  *is_nil = false;
  return cur;
}

Value indirect_interface(const Value& v) {
  if (v.kind() != Kind::kInterface) return v;
  if (v.is_nil()) return Value();
  return v.elem();
}

bool is_true(const Value& v, bool* ok) {
  *ok = true;
  switch (v.kind()) {
    case Kind::kInvalid: return false;
    case Kind::kString:
    case Kind::kSlice:
    case Kind::kMap: return v.len() > 0;
    case Kind::kBool: return v.as_bool();
    case Kind::kInt:
    case Kind::kUint8: return v.as_int() != 0;
    case Kind::kFloat: return v.as_float() != 0;
    case Kind::kPointer:
    case Kind::kInterface: return !v.is_nil();
    case Kind::kStruct: return true;
  }
  *ok = false;
  return false;
}

Value as_any(const Value& v) { return indirect_interface(v); }

}  // namespace sinter::chat::gotemplate
