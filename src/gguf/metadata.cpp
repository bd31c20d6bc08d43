#include "gguf/metadata.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace sinter {

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::kUint8: return "uint8";
    case GgufType::kInt8: return "int8";
    case GgufType::kUint16: return "uint16";
    case GgufType::kInt16: return "int16";
    case GgufType::kUint32: return "uint32";
    case GgufType::kInt32: return "int32";
    case GgufType::kFloat32: return "float32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kUint64: return "uint64";
    case GgufType::kInt64: return "int64";
    case GgufType::kFloat64: return "float64";
  }
  return "unknown";
}

size_t gguf_scalar_size(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool: return 1;
    case GgufType::kUint16:
    case GgufType::kInt16: return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32: return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64: return 8;
    case GgufType::kString:
    case GgufType::kArray: return 0;
  }
  return 0;
}

GgufValue GgufValue::of_strings(const std::vector<std::string>& values) {
  GgufArray array{GgufType::kString, {}};
  array.items.reserve(values.size());
  for (const auto& v : values) array.items.push_back(of_string(v));
  return {GgufType::kArray, std::move(array)};
}

GgufValue GgufValue::of_f32s(const std::vector<float>& values) {
  GgufArray array{GgufType::kFloat32, {}};
  array.items.reserve(values.size());
  for (float v : values) array.items.push_back(of_f32(v));
  return {GgufType::kArray, std::move(array)};
}

GgufValue GgufValue::of_i32s(const std::vector<int32_t>& values) {
  GgufArray array{GgufType::kInt32, {}};
  array.items.reserve(values.size());
  for (int32_t v : values) array.items.push_back(of_i32(v));
  return {GgufType::kArray, std::move(array)};
}

namespace {

void render(const GgufValue& value, size_t max_items, std::ostringstream& out) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          out << '"';
          for (char c : v) {
            if (c == '"' || c == '\\') out << '\\' << c;
            else if (c == '\n') out << "\\n";
            else out << c;
          }
          out << '"';
        } else if constexpr (std::is_same_v<V, bool>) {
          out << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<V, GgufArray>) {
          out << '[';
          for (size_t i = 0; i < v.items.size() && i < max_items; ++i) {
            if (i > 0) out << ", ";
            render(v.items[i], max_items, out);
          }
          if (v.items.size() > max_items) out << ", ... (" << v.items.size() << " items)";
          out << ']';
        } else {
          out << v;
        }
      },
      value.data);
}

std::string type_description(const GgufValue& value) {
  if (value.type != GgufType::kArray) return std::string(gguf_type_name(value.type));
  const auto& array = std::get<GgufArray>(value.data);
  return concat("array of ", gguf_type_name(array.element_type));
}

template <class T>
constexpr std::string_view wanted_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, std::string>) return "string";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return "array of string";
  else if constexpr (std::is_same_v<T, std::vector<float>>) return "array of float32";
  else if constexpr (std::is_same_v<T, std::vector<int32_t>>) return "array of int32";
  else if constexpr (std::is_same_v<T, std::vector<uint32_t>>) return "array of uint32";
  else return "?";
}

Error type_mismatch(std::string_view key, const GgufValue& value, std::string_view wanted) {
  return make_error(ErrorCode::kFormat, "metadata key '", key, "' is ", type_description(value),
                    ", expected ", wanted);
}

template <class T>
Result<T> convert_scalar(const GgufValue& value, std::string_view key) {
  if constexpr (std::is_same_v<T, bool>) {
    if (const bool* b = std::get_if<bool>(&value.data)) return *b;
  } else if constexpr (std::is_integral_v<T>) {
    if (const uint64_t* u = std::get_if<uint64_t>(&value.data)) {
      if (*u <= static_cast<uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(*u);
      return make_error(ErrorCode::kFormat, "metadata key '", key, "' = ", *u, " does not fit in ",
                        wanted_name<T>());
    }
    if (const int64_t* s = std::get_if<int64_t>(&value.data)) {
      if (std::is_signed_v<T> ? (*s >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                                 *s <= static_cast<int64_t>(std::numeric_limits<T>::max()))
                              : (*s >= 0 && static_cast<uint64_t>(*s) <=
                                                static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
        return static_cast<T>(*s);
      }
      return make_error(ErrorCode::kFormat, "metadata key '", key, "' = ", *s, " does not fit in ",
                        wanted_name<T>());
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (const double* d = std::get_if<double>(&value.data)) return static_cast<T>(*d);
    if (const uint64_t* u = std::get_if<uint64_t>(&value.data)) return static_cast<T>(*u);
    if (const int64_t* s = std::get_if<int64_t>(&value.data)) return static_cast<T>(*s);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (const std::string* s = std::get_if<std::string>(&value.data)) return *s;
  }
  return type_mismatch(key, value, wanted_name<T>());
}

}  // namespace

std::string GgufValue::to_display(size_t max_items) const {
  std::ostringstream out;
  out.precision(9);
  render(*this, max_items, out);
  return out.str();
}

template <class T>
Result<T> convert_value(const GgufValue& value, std::string_view key) {
  if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
    using Element = typename T::value_type;
    const auto* array = std::get_if<GgufArray>(&value.data);
    if (array == nullptr) return type_mismatch(key, value, wanted_name<T>());
    T out;
    out.reserve(array->items.size());
    for (size_t i = 0; i < array->items.size(); ++i) {
      auto element = convert_scalar<Element>(array->items[i], key);
      if (!element) return type_mismatch(key, value, wanted_name<T>());
      out.push_back(std::move(element).value());
    }
    return out;
  } else {
    return convert_scalar<T>(value, key);
  }
}

template Result<bool> convert_value<bool>(const GgufValue&, std::string_view);
template Result<uint32_t> convert_value<uint32_t>(const GgufValue&, std::string_view);
template Result<int32_t> convert_value<int32_t>(const GgufValue&, std::string_view);
template Result<uint64_t> convert_value<uint64_t>(const GgufValue&, std::string_view);
template Result<int64_t> convert_value<int64_t>(const GgufValue&, std::string_view);
template Result<float> convert_value<float>(const GgufValue&, std::string_view);
template Result<double> convert_value<double>(const GgufValue&, std::string_view);
template Result<std::string> convert_value<std::string>(const GgufValue&, std::string_view);
template Result<std::vector<std::string>> convert_value<std::vector<std::string>>(const GgufValue&, std::string_view);
template Result<std::vector<float>> convert_value<std::vector<float>>(const GgufValue&, std::string_view);
template Result<std::vector<int32_t>> convert_value<std::vector<int32_t>>(const GgufValue&, std::string_view);
template Result<std::vector<uint32_t>> convert_value<std::vector<uint32_t>>(const GgufValue&, std::string_view);

const GgufValue* Metadata::find_value(std::string_view key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

void Metadata::set(const std::string& key, GgufValue value) {
  const auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(key, std::move(value));
}

bool Metadata::erase(std::string_view key) {
  const auto it = index_.find(key);
  if (it == index_.end()) return false;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
  index_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  return true;
}

template <class T>
Result<T> Metadata::get(std::string_view key) const {
  const GgufValue* value = find_value(key);
  if (value == nullptr) return make_error(ErrorCode::kNotFound, "metadata key '", key, "' is missing");
  return convert_value<T>(*value, key);
}

template <class T>
Result<std::optional<T>> Metadata::find(std::string_view key) const {
  const GgufValue* value = find_value(key);
  if (value == nullptr) return std::optional<T>();
  SINTER_ASSIGN(T converted, convert_value<T>(*value, key));
  return std::optional<T>(std::move(converted));
}

#define SINTER_INSTANTIATE_METADATA(T)                                   \
  template Result<T> Metadata::get<T>(std::string_view) const;           \
  template Result<std::optional<T>> Metadata::find<T>(std::string_view) const;
SINTER_INSTANTIATE_METADATA(bool)
SINTER_INSTANTIATE_METADATA(uint32_t)
SINTER_INSTANTIATE_METADATA(int32_t)
SINTER_INSTANTIATE_METADATA(uint64_t)
SINTER_INSTANTIATE_METADATA(int64_t)
SINTER_INSTANTIATE_METADATA(float)
SINTER_INSTANTIATE_METADATA(double)
SINTER_INSTANTIATE_METADATA(std::string)
SINTER_INSTANTIATE_METADATA(std::vector<std::string>)
SINTER_INSTANTIATE_METADATA(std::vector<float>)
SINTER_INSTANTIATE_METADATA(std::vector<int32_t>)
SINTER_INSTANTIATE_METADATA(std::vector<uint32_t>)
#undef SINTER_INSTANTIATE_METADATA

}  // namespace sinter
