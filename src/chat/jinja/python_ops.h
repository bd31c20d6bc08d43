// Python's behaviour of the values Jinja2 handles: truthiness, str(), repr(), ==, <, len(), iter(),
// `in`, hashing rules for dict keys, and Jinja2's own names for types in messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

bool truthy(const Value& value);
std::string to_str(const Value& value);            // str(x); Undefined prints as ""
std::string repr(const Value& value);              // repr(x)
std::string format_float(double value);            // repr(float): 1.0, 0.1, 1e+16, inf, nan
std::string type_name(const Value& value);         // 'int', 'str', 'NoneType', 'dict' ...
std::string object_type_repr(const Value& value);  // Jinja2's "dict object", "None"

// The error an operation on an Undefined raises (UndefinedError, or SecurityError for an
// attribute the sandbox forbids).
Error undefined_failure(const Value& undefined);

bool equals(const Value& a, const Value& b);
enum class Ordering { kLess, kLessEqual, kGreater, kGreaterEqual };
// a < b, a <= b, a > b, a >= b, with Python's TypeError for kinds that have no order.
Result<bool> ordered(const Value& a, const Value& b, Ordering ordering);
// Python's sorted() order; used by sort filters.
Result<int> compare_values(const Value& a, const Value& b);

// Values stored across loop iterations (namespace attributes, appended items) could nest without
// bound; refuse nesting deeper than `limit` so that printing, comparing and freeing them cannot
// exhaust the stack. With `container`, also refuse a value holding that list or dict (a cycle).
constexpr int kMaxValueNesting = 256;
Status check_nesting(const Value& value, int limit = kMaxValueNesting, const void* container = nullptr);

// A hash consistent with equals(): equal values hash alike (1, 1.0 and True too), for indexes of
// dict keys and unique(); unequal ones may collide.
size_t hash_value(const Value& value);

bool is_hashable(const Value& value);
Status require_hashable(const Value& value);

// len(x)
Result<int64_t> length(const Value& value);
// list(iter(x)): characters of a string, keys of a dict, items of a list; nothing for Undefined.
Result<std::vector<Value>> iterate(const Value& value);
// `item in container`
Result<bool> contains(const Value& container, const Value& item);

}  // namespace sinter::chat::jinja
