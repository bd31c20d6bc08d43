#include "gguf/metadata.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

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

size_t GgufArray::size() const {
  if (element_type == GgufType::kString) return strings.size();
  if (element_type == GgufType::kArray) return arrays.size();
  const size_t width = gguf_scalar_size(element_type);
  return width == 0 ? 0 : scalar_bytes.size() / width;
}

namespace {

template <class Stored>
Stored load(const uint8_t* bytes) {
  Stored value;
  std::memcpy(&value, bytes, sizeof(Stored));
  return value;
}

}  // namespace

GgufValue GgufArray::at(size_t index) const {
  const uint8_t* p = scalar_bytes.data() + index * gguf_scalar_size(element_type);
  switch (element_type) {
    case GgufType::kUint8: return GgufValue::of(load<uint8_t>(p));
    case GgufType::kInt8: return GgufValue::of(load<int8_t>(p));
    case GgufType::kUint16: return GgufValue::of(load<uint16_t>(p));
    case GgufType::kInt16: return GgufValue::of(load<int16_t>(p));
    case GgufType::kUint32: return GgufValue::of(load<uint32_t>(p));
    case GgufType::kInt32: return GgufValue::of(load<int32_t>(p));
    case GgufType::kUint64: return GgufValue::of(load<uint64_t>(p));
    case GgufType::kInt64: return GgufValue::of(load<int64_t>(p));
    case GgufType::kFloat32: return GgufValue::of(load<float>(p));
    case GgufType::kFloat64: return GgufValue::of(load<double>(p));
    case GgufType::kBool: return GgufValue::of(*p != 0);
    case GgufType::kString: return GgufValue::of_string(strings[index]);
    case GgufType::kArray: return GgufValue::of_array(arrays[index]);
  }
  return {};
}

GgufArray GgufArray::of_arrays(std::vector<GgufArray> nested) {
  GgufArray array;
  array.element_type = GgufType::kArray;
  array.arrays = std::move(nested);
  return array;
}

namespace {

void render_string(const std::string& s, std::ostringstream& out) {
  out << '"';
  for (char c : s) {
    if (c == '"' || c == '\\')
      out << '\\' << c;
    else if (c == '\n')
      out << "\\n";
    else
      out << c;
  }
  out << '"';
}

void render(const GgufValue& value, size_t max_items, std::ostringstream& out);

void render_array(const GgufArray& array, size_t max_items, std::ostringstream& out) {
  out << '[';
  const size_t n = array.size();
  for (size_t i = 0; i < n && i < max_items; ++i) {
    if (i > 0) out << ", ";
    // Nested arrays and strings are rendered in place rather than copied out by at().
    if (array.element_type == GgufType::kArray)
      render_array(array.arrays[i], max_items, out);
    else if (array.element_type == GgufType::kString)
      render_string(array.strings[i], out);
    else
      render(array.at(i), max_items, out);
  }
  if (n > max_items) out << ", ... (" << n << " items)";
  out << ']';
}

void render(const GgufValue& value, size_t max_items, std::ostringstream& out) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>)
          render_string(v, out);
        else if constexpr (std::is_same_v<V, bool>)
          out << (v ? "true" : "false");
        else if constexpr (std::is_same_v<V, GgufArray>)
          render_array(v, max_items, out);
        else
          out << v;
      },
      value.data);
}

std::string array_description(const GgufArray& array) {
  return concat("array of ", gguf_type_name(array.element_type));
}

// --- Conversion ------------------------------------------------------------------------------
// Internal conversions return errors whose message is a fragment ("is string, expected uint32"
// or "[3] is int64 -1, which does not fit in uint32"); convert_value puts the key in front.

template <class T>
struct VectorOf {
  static constexpr bool kIsVector = false;
};
template <class E>
struct VectorOf<std::vector<E>> {
  static constexpr bool kIsVector = true;
  using Element = E;
};

bool is_integer_type(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kUint16:
    case GgufType::kInt16:
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kUint64:
    case GgufType::kInt64: return true;
    default: return false;
  }
}

template <class T>
std::string wanted_name() {
  if constexpr (VectorOf<T>::kIsVector)
    return "array of " + wanted_name<typename VectorOf<T>::Element>();
  else
    return std::string(gguf_type_name(gguf_type_of<T>()));
}

// Whether a value stored as `stored` can ever be read as T (ranges are checked per value).
template <class T>
bool stored_type_converts(GgufType stored) {
  if constexpr (VectorOf<T>::kIsVector)
    return stored == GgufType::kArray;
  else if constexpr (std::is_same_v<T, bool>)
    return stored == GgufType::kBool;
  else if constexpr (std::is_integral_v<T>)
    return is_integer_type(stored);
  else if constexpr (std::is_floating_point_v<T>) {
    return is_integer_type(stored) || stored == GgufType::kFloat32 || stored == GgufType::kFloat64;
  } else
    return stored == GgufType::kString;
}

Error mismatch(std::string_view stored, std::string_view wanted) {
  return make_error(ErrorCode::kFormat, "is ", stored, ", expected ", wanted);
}

template <class T, class Stored>
Error out_of_range(GgufType stored_type, Stored value) {
  return make_error(ErrorCode::kFormat, "is ", gguf_type_name(stored_type), " ", value,
                    ", which does not fit in ", wanted_name<T>());
}

// T is a scalar and stored_type_converts<T>(value.type) holds.
template <class T>
Result<T> convert_scalar(const GgufValue& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return std::get<bool>(value.data);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return std::get<std::string>(value.data);
  } else if constexpr (std::is_integral_v<T>) {
    if (const uint64_t* u = std::get_if<uint64_t>(&value.data)) {
      if (std::in_range<T>(*u)) return static_cast<T>(*u);
      return out_of_range<T>(value.type, *u);
    }
    const int64_t s = std::get<int64_t>(value.data);
    if (std::in_range<T>(s)) return static_cast<T>(s);
    return out_of_range<T>(value.type, s);
  } else {
    if (const uint64_t* u = std::get_if<uint64_t>(&value.data)) return static_cast<T>(*u);
    if (const int64_t* s = std::get_if<int64_t>(&value.data)) return static_cast<T>(*s);
    const double d = std::get<double>(value.data);
    if constexpr (std::is_same_v<T, float>) {
      // A finite float64 beyond float32's range would silently become infinity.
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
        return out_of_range<T>(value.type, d);
      }
    }
    return static_cast<T>(d);
  }
}

template <class T>
Result<T> convert_array(const GgufArray& array);

template <class T>
Result<T> convert_any(const GgufValue& value) {
  if (!stored_type_converts<T>(value.type)) return mismatch(value.type_description(), wanted_name<T>());
  if constexpr (VectorOf<T>::kIsVector)
    return convert_array<T>(std::get<GgufArray>(value.data));
  else
    return convert_scalar<T>(value);
}

template <class T>
Result<T> convert_array(const GgufArray& array) {
  using Element = typename VectorOf<T>::Element;
  if (!stored_type_converts<Element>(array.element_type)) {
    return mismatch(array_description(array), wanted_name<T>());
  }
  if constexpr (std::is_same_v<Element, std::string>) {
    return array.strings;
  } else {
    T out;
    const size_t n = array.size();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      Result<Element> element = [&] {
        if constexpr (VectorOf<Element>::kIsVector)
          return convert_array<Element>(array.arrays[i]);
        else
          return convert_scalar<Element>(array.at(i));  // a number: at() does not allocate
      }();
      if (!element) {
        const std::string& inner = element.error().message();
        return Error(ErrorCode::kFormat, concat("[", i, "]", inner[0] == '[' ? "" : " ", inner));
      }
      out.push_back(std::move(element).value());
    }
    return out;
  }
}

}  // namespace

std::string GgufValue::type_description() const {
  if (const auto* array = std::get_if<GgufArray>(&data)) return array_description(*array);
  return std::string(gguf_type_name(type));
}

std::string GgufValue::to_display(size_t max_items) const {
  std::ostringstream out;
  out.precision(9);
  render(*this, max_items, out);
  return out.str();
}

template <class T>
Result<T> convert_value(const GgufValue& value, std::string_view key) {
  Result<T> converted = convert_any<T>(value);
  if (converted) return converted;
  const std::string& problem = converted.error().message();
  return make_error(ErrorCode::kFormat, "metadata key '", key, "'", problem[0] == '[' ? " element " : " ",
                    problem);
}

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
  const size_t position = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(position));
  for (auto& [name, index] : index_) {
    if (index > position) --index;
  }
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

Result<const GgufArray*> Metadata::get_array(std::string_view key) const {
  const GgufValue* value = find_value(key);
  if (value == nullptr) return make_error(ErrorCode::kNotFound, "metadata key '", key, "' is missing");
  const auto* array = std::get_if<GgufArray>(&value->data);
  if (array == nullptr) {
    return make_error(ErrorCode::kFormat, "metadata key '", key, "' is ", value->type_description(),
                      ", expected array");
  }
  return array;
}

#define SINTER_INSTANTIATE_METADATA(T)                                     \
  template Result<T> convert_value<T>(const GgufValue&, std::string_view); \
  template Result<T> Metadata::get<T>(std::string_view) const;             \
  template Result<std::optional<T>> Metadata::find<T>(std::string_view) const;
#define SINTER_INSTANTIATE_METADATA_WITH_VECTOR(T) \
  SINTER_INSTANTIATE_METADATA(T)                   \
  SINTER_INSTANTIATE_METADATA(std::vector<T>)
SINTER_INSTANTIATE_METADATA(bool)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(uint8_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(int8_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(uint16_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(int16_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(uint32_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(int32_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(uint64_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(int64_t)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(float)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(double)
SINTER_INSTANTIATE_METADATA_WITH_VECTOR(std::string)
SINTER_INSTANTIATE_METADATA(std::vector<std::vector<int32_t>>)
SINTER_INSTANTIATE_METADATA(std::vector<std::vector<uint32_t>>)
SINTER_INSTANTIATE_METADATA(std::vector<std::vector<float>>)
SINTER_INSTANTIATE_METADATA(std::vector<std::vector<std::string>>)
#undef SINTER_INSTANTIATE_METADATA_WITH_VECTOR
#undef SINTER_INSTANTIATE_METADATA

}  // namespace sinter
