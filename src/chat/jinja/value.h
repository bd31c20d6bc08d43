// Values of the Jinja interpreter, modelled on the Python objects Jinja2 works with: Undefined,
// None, bool, int, float, str, list, tuple, dict, callables and a few objects (namespace, loop).
//
// Strings are UTF-8 and immutable; lists, dicts and objects are shared by reference, as in Python,
// so `ns.x = 1` on a namespace is seen by every holder of it. Integers are 64-bit (Python's are
// unbounded; overflow is an error, never a wrap-around).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "sinter/result.h"

namespace sinter::chat::jinja {

class Value;
class Interpreter;

// Jinja2's Undefined. `reason` is what an operation that cannot work on it reports
// ("'x' is undefined", "'dict object' has no attribute 'y'"); printing it gives "".
struct Undefined {
  std::shared_ptr<const std::string> reason;
  bool unsafe = false;  // made by the sandbox for a forbidden attribute: using it is a SecurityError
};

struct None {};

// What Python type a sequence stands for: printing, truthiness and len() differ between them.
enum class ListFlavor : uint8_t {
  kList,
  kTuple,       // printed as (a, b), hashable, compares unequal to a list
  kDictItems,   // dict.items(): dict_items([('a', 1)])
  kDictKeys,    // dict.keys()
  kDictValues,  // dict.values()
  kRange,       // range(): range(0, 3)
  // What Jinja2's map/select/reject... filters return: always true, no len(), no indexing, and
  // empty once iterated.
  kGenerator,
};

struct List;
class Dict;
class Callable;
class Object;

using StringPtr = std::shared_ptr<const std::string>;
using ListPtr = std::shared_ptr<List>;
using DictPtr = std::shared_ptr<Dict>;
using CallablePtr = std::shared_ptr<const Callable>;
using ObjectPtr = std::shared_ptr<Object>;

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,  // list or tuple
    kDict,
    kCallable,
    kObject,
  };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string reason, bool unsafe = false);
  static Value none() { return Value(None{}); }
  Value(bool b) : data_(b) {}          // NOLINT: values convert like Python literals
  Value(int v) : data_(int64_t{v}) {}  // NOLINT
  Value(int64_t v) : data_(v) {}       // NOLINT
  Value(double v) : data_(v) {}        // NOLINT
  Value(std::string s) : data_(std::make_shared<const std::string>(std::move(s))) {}  // NOLINT
  Value(const char* s) : Value(std::string(s)) {}                                     // NOLINT
  Value(std::string_view s) : Value(std::string(s)) {}                                // NOLINT
  Value(StringPtr s) : data_(std::move(s)) {}                                         // NOLINT
  Value(ListPtr l) : data_(std::move(l)) {}                                           // NOLINT
  Value(DictPtr d) : data_(std::move(d)) {}                                           // NOLINT
  Value(CallablePtr c) : data_(std::move(c)) {}                                       // NOLINT
  Value(ObjectPtr o) : data_(std::move(o)) {}                                         // NOLINT
  static Value list(std::vector<Value> items = {});
  static Value tuple(std::vector<Value> items);
  static Value sequence(std::vector<Value> items, ListFlavor flavor);
  static Value dict();

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  // int, float or bool: Python's numbers.Number.
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  // int or bool: what Python accepts as an index.
  bool is_integral() const { return is_int() || is_bool(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList && flavor() == ListFlavor::kList; }
  bool is_tuple() const { return kind() == Kind::kList && flavor() == ListFlavor::kTuple; }
  bool is_generator() const { return kind() == Kind::kList && flavor() == ListFlavor::kGenerator; }
  bool is_sequence() const { return kind() == Kind::kList; }  // any flavor
  ListFlavor flavor() const;
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_callable() const { return kind() == Kind::kCallable; }
  bool is_object() const { return kind() == Kind::kObject; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return is_bool() ? int64_t{as_bool()} : std::get<int64_t>(data_); }
  double as_float() const;  // int, bool or float
  const std::string& as_string() const { return *std::get<StringPtr>(data_); }
  const StringPtr& string_ptr() const { return std::get<StringPtr>(data_); }
  const std::vector<Value>& items() const;
  const ListPtr& list_ptr() const { return std::get<ListPtr>(data_); }
  const Dict& as_dict() const { return *dict_ptr(); }
  const DictPtr& dict_ptr() const { return std::get<DictPtr>(data_); }
  const Callable& as_callable() const { return *callable_ptr(); }
  const CallablePtr& callable_ptr() const { return std::get<CallablePtr>(data_); }
  Object& as_object() const { return *object_ptr(); }
  const ObjectPtr& object_ptr() const { return std::get<ObjectPtr>(data_); }
  // Why this value is undefined ("'x' is undefined"); for Undefined only.
  std::string undefined_reason() const;
  bool undefined_is_unsafe() const { return std::get<Undefined>(data_).unsafe; }

  // The same object (Python `is`) for shared kinds; the same value for None/bool.
  bool same_object(const Value& other) const;

 private:
  explicit Value(None n) : data_(n) {}
  explicit Value(Undefined u) : data_(std::move(u)) {}

  std::variant<Undefined, None, bool, int64_t, double, StringPtr, ListPtr, DictPtr, CallablePtr, ObjectPtr>
      data_;
};

struct List {
  std::vector<Value> items;
  ListFlavor flavor = ListFlavor::kList;
  int64_t range_start = 0, range_stop = 0, range_step = 1;  // for kRange
  bool is_tuple() const { return flavor == ListFlavor::kTuple; }
};

// A dict in insertion order. Keys are hashable values (str, int, float, bool, None, tuple);
// lookup uses Python equality (1, 1.0 and True are the same key).
class Dict {
 public:
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(const Value& key, Value value);
  bool erase(const Value& key);
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
  void clear() {
    entries_.clear();
    string_index_.clear();
    other_index_.clear();
  }

 private:
  std::vector<std::pair<Value, Value>> entries_;
  std::unordered_map<std::string, size_t> string_index_;  // position of each string key
  std::unordered_multimap<size_t, size_t> other_index_;   // hash_value() → position, other keys
};

// Arguments of a call: f(1, 2, key=3).
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Anything a template can call: globals (range, namespace, raise_exception), macros, bound methods
// of strings, lists and dicts, loop.cycle ... Errors returned by call() carry no location; the
// interpreter adds the location of the call.
class Callable {
 public:
  virtual ~Callable() = default;
  virtual std::string name() const = 0;
  virtual Result<Value> call(Interpreter& interpreter, CallArgs args) const = 0;
  // Macros render template code and report errors with their own locations.
  virtual bool is_macro() const { return false; }
};

// Objects with attributes: namespace(), the loop variable, cycler(), joiner().
class Object {
 public:
  virtual ~Object() = default;
  // Python's type name ("Namespace", "LoopContext").
  virtual std::string type_name() const = 0;
  // The attribute, or an Undefined saying it is missing.
  virtual Value attribute(std::string_view name) const = 0;
  virtual std::string repr() const = 0;
  // Only a namespace accepts `{% set ns.attr = value %}`.
  virtual bool is_namespace() const { return false; }
  virtual void set_attribute(const std::string& name, Value value);
  // Drops held values, so that reference cycles made during a render are broken after it.
  virtual void clear() {}
};

inline ListFlavor Value::flavor() const { return std::get<ListPtr>(data_)->flavor; }
inline const std::vector<Value>& Value::items() const { return std::get<ListPtr>(data_)->items; }

}  // namespace sinter::chat::jinja
