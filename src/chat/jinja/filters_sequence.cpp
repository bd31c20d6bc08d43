// Filters on sequences and mappings. Like Jinja2's, map/select/reject/unique/reverse/batch/slice
// return generators (always true, no len(), exhausted once iterated); sort and dictsort lists.
#include <algorithm>
#include <unordered_map>

#include "chat/jinja/arguments.h"
#include "chat/jinja/attributes.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

Result<BoundArguments> bind(std::string_view filter, const CallArgs& args,
                            std::initializer_list<std::string_view> parameters, size_t required = 0) {
  return BoundArguments::bind(concat("do_", filter), args, parameters, required);
}

Value generator(std::vector<Value> items) {
  return Value::sequence(std::move(items), ListFlavor::kGenerator);
}

// A lower-cased copy of a string (other values as they are), charged to the render: sorting many
// long strings case-insensitively copies each of them.
Result<Value> ignore_case(Interpreter& interpreter, const Value& value) {
  if (!value.is_string()) return value;
  Value lowered(py::lower(value.as_string()));
  SINTER_TRY(interpreter.charge(lowered));
  return lowered;
}

// Jinja2's make_attrgetter: "a.b.0" looks up item a, then b, then 0 (digit parts are integers).
class AttributeGetter {
 public:
  AttributeGetter(const Value& attribute, bool lower_case, std::optional<Value> fallback = std::nullopt)
      : lower_case_(lower_case), fallback_(std::move(fallback)) {
    if (attribute.is_string()) {
      for (const auto& part : py::split(attribute.as_string(), std::string("."), -1)) {
        bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
        parts_.push_back(digits && part.size() < 18 ? Value(static_cast<int64_t>(std::stoll(part)))
                                                    : Value(part));
      }
    } else if (attribute.is_integral()) {
      parts_.push_back(Value(attribute.as_int()));
    }
  }

  Result<Value> operator()(Interpreter& interpreter, Value item) const {
    for (const auto& part : parts_) {
      SINTER_ASSIGN(item, get_item(interpreter, item, part));
      if (fallback_ && item.is_undefined()) item = *fallback_;
    }
    return lower_case_ ? ignore_case(interpreter, item) : item;
  }

 private:
  std::vector<Value> parts_;
  bool lower_case_;
  std::optional<Value> fallback_;
};

// Like Python's sorted(): stable, with the first error of a comparison reported.
Status sort_by_keys(std::vector<std::pair<Value, Value>>* keyed, bool reverse) {
  Status failure = ok_status();
  std::stable_sort(keyed->begin(), keyed->end(), [&](const auto& x, const auto& y) {
    if (!failure) return false;  // after an error (the budget, a type), finish without comparing
    auto c = reverse ? compare_values(y.first, x.first) : compare_values(x.first, y.first);
    if (!c) {
      if (failure) failure = std::move(c).error();
      return false;
    }
    return *c < 0;
  });
  return failure;
}

Result<Value> filter_length(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("len", args));
  SINTER_ASSIGN(int64_t n, length(input));
  return Value(n);
}

Result<Value> filter_list(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_list", args));
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  return Value::list(std::move(items));
}

Result<Value> filter_first(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_first", args));
  if (input.is_generator()) {  // next() takes one item and leaves the rest
    auto& items = input.list_ptr()->items;
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    Value first = items.front();
    items.erase(items.begin());
    return first;
  }
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Result<Value> filter_last(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_last", args));
  if (input.is_generator()) return type_error("'generator' object is not reversible");
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Result<Value> filter_items(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_items", args));
  if (input.is_undefined()) return generator({});
  if (!input.is_dict()) return type_error("Can only get item pairs from a mapping.");
  std::vector<Value> items;
  for (const auto& [key, value] : input.as_dict().entries()) items.push_back(Value::tuple({key, value}));
  return generator(std::move(items));
}

Result<Value> filter_join(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("join", args, {"d", "attribute"}));
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  std::string separator = to_str(a.get(0, Value("")));
  std::optional<AttributeGetter> getter;
  if (a.has(1) && !a.get(1).is_none()) getter.emplace(a.get(1), false);
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (getter) {
      SINTER_ASSIGN(item, (*getter)(interpreter, item));
    }
    if (i) out += separator;
    out += to_str(item);
    SINTER_TRY(interpreter.check_size(out.size()));
  }
  return Value(std::move(out));
}

Result<Value> filter_reverse(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_reverse", args));
  if (input.is_string()) {
    std::u32string text = py::decode(input.as_string());
    std::reverse(text.begin(), text.end());
    return Value(py::encode(text));
  }
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  std::reverse(items.begin(), items.end());
  return generator(std::move(items));
}

Result<Value> filter_map(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  std::vector<Value> out;
  out.reserve(items.size());
  if (args.positional.empty()) {
    std::optional<Value> attribute;
    std::optional<Value> fallback;
    for (const auto& [key, value] : args.keyword) {
      if (key == "attribute") {
        attribute = value;
      } else if (key == "default") {
        fallback = value;
      } else {
        return Error(ErrorCode::kInvalidArgument,
                     "FilterArgumentError: Unexpected keyword argument '" + key + "'");
      }
    }
    if (!attribute)
      return Error(ErrorCode::kInvalidArgument, "FilterArgumentError: map requires a filter argument");
    AttributeGetter getter(*attribute, false, fallback && !fallback->is_none() ? fallback : std::nullopt);
    for (auto& item : items) {
      SINTER_ASSIGN(Value mapped, getter(interpreter, item));
      out.push_back(std::move(mapped));
    }
    return generator(std::move(out));
  }
  std::string name = to_str(args.positional[0]);
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (auto& item : items) {
    SINTER_ASSIGN(Value mapped, interpreter.apply_filter(name, item, rest));
    SINTER_TRY(interpreter.charge(mapped));  // each result is a value built, before the next
    out.push_back(std::move(mapped));
  }
  return generator(std::move(out));
}

// select / reject / selectattr / rejectattr.
Result<Value> select_or_reject(Interpreter& interpreter, const Value& input, const CallArgs& args,
                               bool keep_matching, bool by_attribute) {
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  size_t offset = 0;
  std::optional<AttributeGetter> getter;
  if (by_attribute) {
    if (args.positional.empty()) {
      return Error(ErrorCode::kInvalidArgument, "FilterArgumentError: Missing parameter for attribute name");
    }
    getter.emplace(args.positional[0], false);
    offset = 1;
  }
  std::optional<std::string> test;
  CallArgs test_args;
  if (args.positional.size() > offset) {
    test = to_str(args.positional[offset]);
    test_args.positional.assign(args.positional.begin() + static_cast<long>(offset) + 1,
                                args.positional.end());
    test_args.keyword = args.keyword;
  }
  std::vector<Value> out;
  for (auto& item : items) {
    Value subject = item;
    if (getter) {
      SINTER_ASSIGN(subject, (*getter)(interpreter, item));
    }
    bool matched = false;
    if (test) {
      SINTER_ASSIGN(matched, interpreter.apply_test(*test, subject, test_args));
    } else {
      matched = truthy(subject);
    }
    if (matched == keep_matching) out.push_back(std::move(item));
  }
  return generator(std::move(out));
}

Result<Value> filter_select(Interpreter& i, const Value& input, const CallArgs& args) {
  return select_or_reject(i, input, args, true, false);
}
Result<Value> filter_reject(Interpreter& i, const Value& input, const CallArgs& args) {
  return select_or_reject(i, input, args, false, false);
}
Result<Value> filter_selectattr(Interpreter& i, const Value& input, const CallArgs& args) {
  return select_or_reject(i, input, args, true, true);
}
Result<Value> filter_rejectattr(Interpreter& i, const Value& input, const CallArgs& args) {
  return select_or_reject(i, input, args, false, true);
}

Result<Value> filter_sort(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("sort", args, {"reverse", "case_sensitive", "attribute"}));
  bool reverse = truthy(a.get(0, Value(false)));
  bool case_sensitive = truthy(a.get(1, Value(false)));
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  // A comma-separated attribute list sorts by several keys.
  std::vector<AttributeGetter> getters;
  Value attribute = a.get(2, Value::none());
  if (attribute.is_string()) {
    for (const auto& part : py::split(attribute.as_string(), std::string(","), -1)) {
      getters.emplace_back(Value(py::strip(part, std::nullopt, py::StripSide::kBoth)), !case_sensitive);
    }
  } else if (attribute.is_integral()) {
    getters.emplace_back(attribute, !case_sensitive);
  }
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& item : items) {
    Value key;
    if (getters.empty()) {
      if (case_sensitive) {
        key = item;
      } else {
        SINTER_ASSIGN(key, ignore_case(interpreter, item));
      }
    } else if (getters.size() == 1) {
      SINTER_ASSIGN(key, getters[0](interpreter, item));
    } else {
      std::vector<Value> parts;
      for (const auto& getter : getters) {
        SINTER_ASSIGN(Value part, getter(interpreter, item));
        parts.push_back(std::move(part));
      }
      key = Value::list(std::move(parts));
    }
    keyed.emplace_back(std::move(key), std::move(item));
  }
  SINTER_TRY(sort_by_keys(&keyed, reverse));
  std::vector<Value> out;
  for (auto& [key, item] : keyed) out.push_back(std::move(item));
  return Value::list(std::move(out));
}

Result<Value> filter_dictsort(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("dictsort", args, {"case_sensitive", "by", "reverse"}));
  bool case_sensitive = truthy(a.get(0, Value(false)));
  std::string by = to_str(a.get(1, Value("key")));
  if (by != "key" && by != "value") {
    return Error(ErrorCode::kInvalidArgument,
                 "FilterArgumentError: You can only sort by either \"key\" or \"value\"");
  }
  if (!input.is_dict()) return type_error(concat("'", type_name(input), "' object has no attribute 'items'"));
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& [key, value] : input.as_dict().entries()) {
    Value sort_key = by == "key" ? key : value;
    if (!case_sensitive) {
      SINTER_ASSIGN(sort_key, ignore_case(interpreter, sort_key));
    }
    keyed.emplace_back(sort_key, Value::tuple({key, value}));
  }
  SINTER_TRY(sort_by_keys(&keyed, truthy(a.get(2, Value(false)))));
  std::vector<Value> out;
  for (auto& [key, item] : keyed) out.push_back(std::move(item));
  return Value::list(std::move(out));
}

Result<Value> filter_unique(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("unique", args, {"case_sensitive", "attribute"}));
  bool case_sensitive = truthy(a.get(0, Value(false)));
  AttributeGetter getter(a.get(1, Value::none()), !case_sensitive);
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  std::vector<Value> seen;
  std::unordered_multimap<size_t, size_t> seen_index;  // hash_value() → position in `seen`
  std::vector<Value> out;
  for (auto& item : items) {
    SINTER_ASSIGN(Value key, getter(interpreter, item));
    SINTER_TRY(require_hashable(key));
    size_t hash = hash_value(key);
    auto [begin, end] = seen_index.equal_range(hash);
    bool duplicate =
        std::any_of(begin, end, [&](const auto& entry) { return equals(seen[entry.second], key); });
    if (duplicate) continue;
    seen_index.emplace(hash, seen.size());
    seen.push_back(std::move(key));
    out.push_back(std::move(item));
  }
  return generator(std::move(out));
}

Result<Value> min_or_max(Interpreter& interpreter, const Value& input, const CallArgs& args, bool maximum) {
  SINTER_ASSIGN(auto a, bind(maximum ? "max" : "min", args, {"case_sensitive", "attribute"}));
  bool case_sensitive = truthy(a.get(0, Value(false)));
  AttributeGetter getter(a.get(1, Value::none()), !case_sensitive);
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  SINTER_ASSIGN(Value best_key, getter(interpreter, items[0]));
  for (size_t i = 1; i < items.size(); ++i) {
    SINTER_ASSIGN(Value key, getter(interpreter, items[i]));
    SINTER_ASSIGN(bool better, ordered(key, best_key, maximum ? Ordering::kGreater : Ordering::kLess));
    if (better) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

Result<Value> filter_max(Interpreter& i, const Value& input, const CallArgs& args) {
  return min_or_max(i, input, args, true);
}
Result<Value> filter_min(Interpreter& i, const Value& input, const CallArgs& args) {
  return min_or_max(i, input, args, false);
}

Result<Value> filter_sum(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("sum", args, {"attribute", "start"}));
  std::optional<AttributeGetter> getter;
  if (a.has(0) && !a.get(0).is_none()) getter.emplace(a.get(0), false);
  Value total = a.get(1, Value(0));
  if (total.is_string()) return type_error("sum() can't sum strings [use ''.join(seq) instead]");
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  for (auto& item : items) {
    if (getter) {
      SINTER_ASSIGN(item, (*getter)(interpreter, item));
    }
    SINTER_ASSIGN(
        total, binary_operation(BinaryOp::kAdd, total, item, interpreter.options().limits.max_output_bytes));
  }
  return total;
}

Result<Value> filter_batch(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("batch", args, {"linecount", "fill_with"}, 1));
  Value count = a.get(0);
  if (!count.is_integral() || count.as_int() <= 0)
    return value_error("batch size must be a positive integer");
  auto size = static_cast<size_t>(count.as_int());
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  std::vector<Value> out;
  std::vector<Value> current;
  for (auto& item : items) {
    current.push_back(std::move(item));
    if (current.size() == size) out.push_back(Value::list(std::exchange(current, {})));
  }
  if (!current.empty()) {
    if (a.has(1) && !a.get(1).is_none()) {
      while (current.size() < size) current.push_back(a.get(1));
    }
    out.push_back(Value::list(std::move(current)));
  }
  return generator(std::move(out));
}

Result<Value> filter_slice(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("slice", args, {"slices", "fill_with"}, 1));
  Value count = a.get(0);
  if (!count.is_integral() || count.as_int() <= 0)
    return value_error("slice count must be a positive integer");
  SINTER_ASSIGN(std::vector<Value> items, iterate(input));
  auto slices = static_cast<size_t>(count.as_int());
  size_t per_slice = items.size() / slices;
  size_t with_extra = items.size() % slices;
  size_t offset = 0;
  std::vector<Value> out;
  for (size_t slice = 0; slice < slices; ++slice) {
    size_t start = offset + slice * per_slice;
    if (slice < with_extra) ++offset;
    size_t end = offset + (slice + 1) * per_slice;
    std::vector<Value> part(items.begin() + static_cast<long>(start), items.begin() + static_cast<long>(end));
    if (a.has(1) && !a.get(1).is_none() && slice >= with_extra) part.push_back(a.get(1));
    out.push_back(Value::list(std::move(part)));
  }
  return generator(std::move(out));
}

constexpr FilterEntry kSequenceFilters[] = {
    {"batch", filter_batch},
    {"count", filter_length},
    {"dictsort", filter_dictsort},
    {"first", filter_first},
    {"items", filter_items},
    {"join", filter_join},
    {"last", filter_last},
    {"length", filter_length},
    {"list", filter_list},
    {"map", filter_map},
    {"max", filter_max},
    {"min", filter_min},
    {"reject", filter_reject},
    {"rejectattr", filter_rejectattr},
    {"reverse", filter_reverse},
    {"select", filter_select},
    {"selectattr", filter_selectattr},
    {"slice", filter_slice},
    {"sort", filter_sort},
    {"sum", filter_sum},
    {"unique", filter_unique},
};

}  // namespace

std::span<const FilterEntry> sequence_filters() { return kSequenceFilters; }

}  // namespace sinter::chat::jinja
