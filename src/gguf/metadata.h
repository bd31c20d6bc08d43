// GGUF metadata values and typed access to them.
//
// Values own their data. Arrays are stored compactly by element type: numbers and bools as the
// file's little-endian bytes (a 150k-entry float array is one 600 KB block, not 150k objects),
// strings and nested arrays as vectors. So parsed metadata takes at most a few times the bytes
// it came from, and a vocabulary of 150k strings loads in milliseconds. Tensor payloads, the
// large part of a file, stay zero-copy in the mapped file.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "sinter/result.h"

namespace sinter {

// GGUF value type ids as stored in the file.
enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

constexpr uint32_t kGgufTypeCount = 13;
// Arrays inside arrays deeper than this are malformed (real files nest at most once).
constexpr int kGgufMaxArrayDepth = 8;

std::string_view gguf_type_name(GgufType type);  // "uint32", "array"; "unknown" out of range
// Bytes of one stored scalar of this type; 0 for strings and arrays.
size_t gguf_scalar_size(GgufType type);

// The GGUF type that stores a C++ value type: bool → kBool, an integer by its width and
// signedness (uint32_t → kUint32, long long → kInt64), float → kFloat32, double → kFloat64,
// std::string → kString.
template <class T>
constexpr GgufType gguf_type_of() {
  if constexpr (std::is_same_v<T, bool>) {
    return GgufType::kBool;
  } else if constexpr (std::is_integral_v<T>) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
    constexpr bool kSigned = std::is_signed_v<T>;
    if constexpr (sizeof(T) == 1)
      return kSigned ? GgufType::kInt8 : GgufType::kUint8;
    else if constexpr (sizeof(T) == 2)
      return kSigned ? GgufType::kInt16 : GgufType::kUint16;
    else if constexpr (sizeof(T) == 4)
      return kSigned ? GgufType::kInt32 : GgufType::kUint32;
    else
      return kSigned ? GgufType::kInt64 : GgufType::kUint64;
  } else if constexpr (std::is_same_v<T, float>) {
    return GgufType::kFloat32;
  } else if constexpr (std::is_same_v<T, double>) {
    return GgufType::kFloat64;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return GgufType::kString;
  } else {
    static_assert(sizeof(T) == 0, "no GGUF type stores this C++ type");
  }
}

struct GgufValue;

struct GgufArray {
  GgufType element_type = GgufType::kUint8;
  // Exactly one of these holds the elements, chosen by element_type:
  std::vector<uint8_t> scalar_bytes;  // numbers and bools: size() × gguf_scalar_size(), little-endian
  std::vector<std::string> strings;   // kString
  std::vector<GgufArray> arrays;      // kArray; each nested array has its own element type

  size_t size() const;
  bool empty() const { return size() == 0; }
  // Element `index` (< size()) as a value of its own: a copy.
  GgufValue at(size_t index) const;

  // An array of numbers or bools (T as in gguf_type_of), or of strings.
  template <class T>
  static GgufArray of(const std::vector<T>& values);
  static GgufArray of_arrays(std::vector<GgufArray> arrays);

  bool operator==(const GgufArray&) const = default;
};

struct GgufValue {
  GgufType type = GgufType::kUint8;
  // Unsigned types are held as uint64_t, signed as int64_t, floats as double; the declared
  // `type` says how the file stored them (and how the writer will store them again).
  std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray> data;

  // A scalar of the GGUF type that stores T: of(uint16_t{7}) is a kUint16.
  template <class T>
  static GgufValue of(T value);

  static GgufValue of_u32(uint32_t v) { return of(v); }
  static GgufValue of_u64(uint64_t v) { return of(v); }
  static GgufValue of_i32(int32_t v) { return of(v); }
  static GgufValue of_f32(float v) { return of(v); }
  static GgufValue of_bool(bool v) { return of(v); }
  static GgufValue of_string(std::string v) { return {GgufType::kString, std::move(v)}; }
  static GgufValue of_array(GgufArray array) { return {GgufType::kArray, std::move(array)}; }
  static GgufValue of_strings(const std::vector<std::string>& values) {
    return of_array(GgufArray::of(values));
  }
  static GgufValue of_f32s(const std::vector<float>& values) { return of_array(GgufArray::of(values)); }
  static GgufValue of_i32s(const std::vector<int32_t>& values) { return of_array(GgufArray::of(values)); }

  // "uint32", "array of string", "array of array".
  std::string type_description() const;
  // A short human rendering: numbers, quoted strings, arrays shortened after `max_items`.
  std::string to_display(size_t max_items = 8) const;

  bool operator==(const GgufValue&) const = default;
};

// Ordered key → value map (file order is kept so that a rewrite preserves it).
class Metadata {
 public:
  bool contains(std::string_view key) const { return find_value(key) != nullptr; }
  const GgufValue* find_value(std::string_view key) const;
  // Adds or replaces.
  void set(const std::string& key, GgufValue value);
  bool erase(std::string_view key);
  const std::vector<std::pair<std::string, GgufValue>>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

  // Typed access. T is one of: bool; the integers uint8_t..int64_t; float, double; std::string;
  // std::vector of any of those except bool; std::vector<std::vector<E>> for E in int32_t,
  // uint32_t, float, std::string.
  // Integers convert between widths when the value fits; integers read as floats (rounded to
  // the nearest representable value); a float64 reads as float32 when it is in range. Anything
  // else (a string read as a number, a float read as an integer, an array read as a scalar, a
  // value out of range) is an error that names the key, the stored type and the asked type.
  template <class T>
  Result<T> get(std::string_view key) const;
  // Like get(), but a missing key is std::nullopt instead of an error.
  template <class T>
  Result<std::optional<T>> find(std::string_view key) const;
  // The stored array itself, without copying (a 150k-token vocabulary); an error if the key is
  // missing or not an array.
  Result<const GgufArray*> get_array(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> entries_;
  std::map<std::string, size_t, std::less<>> index_;
};

// Converts one value to T (as Metadata::get), or explains why not, naming `key`.
template <class T>
Result<T> convert_value(const GgufValue& value, std::string_view key);

template <class T>
GgufValue GgufValue::of(T value) {
  constexpr GgufType type = gguf_type_of<T>();
  if constexpr (std::is_same_v<T, bool>)
    return {type, value};
  else if constexpr (std::is_floating_point_v<T>)
    return {type, double{value}};
  else if constexpr (std::is_same_v<T, std::string>)
    return {type, std::move(value)};
  else if constexpr (std::is_signed_v<T>)
    return {type, int64_t{value}};
  else
    return {type, uint64_t{value}};
}

template <class T>
GgufArray GgufArray::of(const std::vector<T>& values) {
  GgufArray array;
  array.element_type = gguf_type_of<T>();
  if constexpr (std::is_same_v<T, std::string>) {
    array.strings = values;
  } else {
    array.scalar_bytes.resize(values.size() * sizeof(T));
    for (size_t i = 0; i < values.size(); ++i) {
      const T value = values[i];  // vector<bool> has no data(): copy element by element
      std::memcpy(array.scalar_bytes.data() + i * sizeof(T), &value, sizeof(T));
    }
  }
  return array;
}

}  // namespace sinter
