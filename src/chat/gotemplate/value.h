// Values of the Go text/template interpreter: a small model of Go's reflect, enough to evaluate
// templates over the data Ollama passes (maps, slices, structs, pointers, interfaces, strings,
// numbers) with Go's rules for field access, truthiness, printing and JSON.
//
// Every value carries its static Go type (`Type`), because Go's behaviour depends on it: a missing
// map key yields the zero value of the map's element type, `{{ . }}` of a named type with a String
// method prints that method's result, `%T` prints the type's name, and an interface value is
// unwrapped one level in a pipeline. Values are immutable and share their payload.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sinter::chat::gotemplate {

// reflect.Kind, restricted to what templates over JSON-like data meet. Map keys are strings.
enum class Kind : uint8_t {
  kInvalid,  // reflect's zero Value: "no value"
  kBool,
  kInt,    // int (also what len, index arithmetic and integer literals give)
  kUint8,  // byte, the element of []byte
  kFloat,  // float64
  kString,
  kSlice,
  kMap,
  kStruct,
  kPointer,
  kInterface,  // interface {} (the only interface type templates here see)
};

// What the type's String() method prints (Go's fmt.Stringer), if it has one.
enum class Stringer : uint8_t {
  kNone,
  kJson,                  // json.Marshal of the value
  kJsonNilAsEmptyObject,  // the same, but a nil map prints "{}"
  kPropertyType,          // api.PropertyType: "" / the one type / "[a b]"
};

// How encoding/json writes the type when it has its own MarshalJSON.
enum class Marshaler : uint8_t {
  kDefault,
  kPropertyType,  // one element: the string; otherwise the array
  kOrderedMap,    // pointer to an insertion-ordered map (api.ToolPropertiesMap)
};

struct Type;

struct Field {
  std::string name;  // Go field name (exported)
  const Type* type = nullptr;
  std::string json_name;
  bool omit_empty = false;
};

struct Type {
  Type(Kind k, std::string type_name, const Type* element = nullptr)
      : kind(k), name(std::move(type_name)), elem(element) {}

  Kind kind = Kind::kInvalid;
  std::string name;            // reflect's Type.String(): "string", "[]interface {}", "*api.X"
  const Type* elem = nullptr;  // slice element, map value, pointer target
  std::vector<Field> fields;   // struct fields in order
  Stringer stringer = Stringer::kNone;
  Marshaler marshaler = Marshaler::kDefault;
  bool has_typescript_method = false;  // api.ToolProperty.ToTypeScriptType()
  bool is_bytes() const { return kind == Kind::kSlice && elem && elem->kind == Kind::kUint8; }
};

// The builtin types every template meets.
struct BasicTypes {
  Type bool_t{Kind::kBool, "bool"};
  Type int_t{Kind::kInt, "int"};
  Type byte_t{Kind::kUint8, "uint8"};
  Type float64_t{Kind::kFloat, "float64"};
  Type string_t{Kind::kString, "string"};
  Type any_t{Kind::kInterface, "interface {}"};
  Type slice_any{Kind::kSlice, "[]interface {}", &any_t};
  Type map_any{Kind::kMap, "map[string]interface {}", &any_t};
  Type slice_string{Kind::kSlice, "[]string", &string_t};
};
const BasicTypes& basic_types();

class Value;
using MapEntries = std::vector<std::pair<std::string, Value>>;

class Value {
 public:
  Value() = default;  // invalid: reflect's zero Value

  static Value boolean(bool b);
  static Value integer(int64_t i);  // type int
  static Value float64(double f);
  static Value string(std::string s);
  static Value of_type(const Type* type, bool b);
  static Value of_type(const Type* type, int64_t i);
  static Value of_type(const Type* type, double f);
  static Value of_type(const Type* type, std::string s);  // string kind, or []byte-like slice
  static Value slice(const Type* type, std::vector<Value> items);
  static Value nil(const Type* type);  // nil slice, map, pointer or interface
  // A Go map: entries are sorted by key (Go iterates and prints maps in key order) unless
  // `keep_order` (an insertion-ordered map). Later duplicates replace earlier ones.
  static Value map(const Type* type, MapEntries entries, bool keep_order = false);
  static Value structure(const Type* type, std::vector<Value> fields);
  static Value pointer_to(const Type* pointer_type, Value target);
  // An interface holding `dynamic`; an invalid `dynamic` makes a nil interface.
  static Value interface(const Type* interface_type, Value dynamic);
  static Value any(Value dynamic) { return interface(&basic_types().any_t, std::move(dynamic)); }
  // reflect.Zero(type).
  static Value zero(const Type* type);

  bool valid() const { return type_ != nullptr; }
  const Type* type() const { return type_; }
  Kind kind() const { return type_ ? type_->kind : Kind::kInvalid; }
  // For slices, maps, pointers and interfaces.
  bool is_nil() const;

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  const std::string& as_string() const;  // string kind, or the bytes of a []byte-like slice
  // Length of a string, slice or map (0 when nil).
  size_t len() const;
  // Element i of a slice (a []byte-like slice yields uint8 values).
  Value index(size_t i) const;
  const MapEntries& entries() const;              // map entries in iteration order
  const Value* find(std::string_view key) const;  // map lookup
  const Value& field(size_t i) const;             // struct field
  const Value& elem() const;                      // pointer target or interface's dynamic value
  // Two values sharing the same payload object (for Go's `==` on pointers and maps).
  bool same_payload(const Value& other) const;

 private:
  struct MapData {
    MapEntries entries;
    bool sorted = true;  // entries in key order: lookups use binary search
  };
  using StringPtr = std::shared_ptr<const std::string>;
  using ListPtr = std::shared_ptr<const std::vector<Value>>;
  using MapPtr = std::shared_ptr<const MapData>;
  using BoxPtr = std::shared_ptr<const Value>;

  const Type* type_ = nullptr;
  std::variant<std::monostate, bool, int64_t, double, StringPtr, ListPtr, MapPtr, BoxPtr> data_;
};

// reflect-style helpers that exec and the builtins share.
// Follows pointers and interfaces until a non-nil concrete value (or the nil one that stops it).
Value indirect(const Value& v, bool* is_nil);
// The dynamic value of an interface (invalid if nil); other values unchanged.
Value indirect_interface(const Value& v);
// Go's template truthiness; false in *ok for values that have none.
bool is_true(const Value& v, bool* ok);
// The value an `any` parameter receives: interfaces are unwrapped (nil → invalid).
Value as_any(const Value& v);

}  // namespace sinter::chat::gotemplate
