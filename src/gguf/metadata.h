// GGUF metadata values and typed access to them.
//
// Values own their data (a vocabulary of 150k strings loads in milliseconds); tensor payloads,
// the large part of a file, stay zero-copy in the mapped file.
#pragma once

#include <cstdint>
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
std::string_view gguf_type_name(GgufType type);
// Bytes of one stored scalar of this type; 0 for strings and arrays.
size_t gguf_scalar_size(GgufType type);

struct GgufValue;

struct GgufArray {
  GgufType element_type = GgufType::kUint8;
  std::vector<GgufValue> items;
};

struct GgufValue {
  GgufType type = GgufType::kUint8;
  // Unsigned types are held as uint64_t, signed as int64_t, floats as double; the declared
  // `type` says how the file stored them (and how the writer will store them again).
  std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray> data;

  static GgufValue of_u32(uint32_t v) { return {GgufType::kUint32, uint64_t{v}}; }
  static GgufValue of_u64(uint64_t v) { return {GgufType::kUint64, v}; }
  static GgufValue of_i32(int32_t v) { return {GgufType::kInt32, int64_t{v}}; }
  static GgufValue of_f32(float v) { return {GgufType::kFloat32, double{v}}; }
  static GgufValue of_bool(bool v) { return {GgufType::kBool, v}; }
  static GgufValue of_string(std::string v) { return {GgufType::kString, std::move(v)}; }
  static GgufValue of_strings(const std::vector<std::string>& values);
  static GgufValue of_f32s(const std::vector<float>& values);
  static GgufValue of_i32s(const std::vector<int32_t>& values);

  // A short human rendering: numbers, quoted strings, arrays shortened after `max_items`.
  std::string to_display(size_t max_items = 8) const;
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

  // Typed access. T is one of: bool, uint32_t, int32_t, uint64_t, int64_t, float, double,
  // std::string, std::vector<std::string>, std::vector<float>, std::vector<int32_t>,
  // std::vector<uint32_t>. Integers convert between widths when the value fits; integers read
  // as floats; anything else (a string read as a number, a float read as an integer) is an
  // error that names the key, the stored type and the asked type.
  template <class T>
  Result<T> get(std::string_view key) const;
  // Like get(), but a missing key is std::nullopt instead of an error.
  template <class T>
  Result<std::optional<T>> find(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> entries_;
  std::map<std::string, size_t, std::less<>> index_;
};

// Converts one value to T, or explains why not (used by Metadata::get and friends).
template <class T>
Result<T> convert_value(const GgufValue& value, std::string_view key);

}  // namespace sinter
