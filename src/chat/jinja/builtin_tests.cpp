// Jinja2's built-in tests (`x is defined`, `x is divisibleby 3`, `x is eq y` ...), as in tests.py.
#include "chat/jinja/arguments.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/objects.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

Result<Value> one_argument(std::string_view test, const CallArgs& args) {
  SINTER_ASSIGN(auto a, BoundArguments::bind(concat("test_", test), args, {"other"}, 1));
  return a.get(0);
}

Result<bool> test_defined(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_defined", args));
  return !v.is_undefined();
}
Result<bool> test_undefined(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_undefined", args));
  return v.is_undefined();
}
Result<bool> test_none(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_none", args));
  return v.is_none();
}
Result<bool> test_boolean(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_boolean", args));
  return v.is_bool();
}
Result<bool> test_true(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_true", args));
  return v.is_bool() && v.as_bool();
}
Result<bool> test_false(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_false", args));
  return v.is_bool() && !v.as_bool();
}
Result<bool> test_integer(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_integer", args));
  return v.is_int();
}
Result<bool> test_float(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_float", args));
  return v.is_float();
}
Result<bool> test_number(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_number", args));
  return v.is_number();
}
Result<bool> test_string(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_string", args));
  return v.is_string();
}
Result<bool> test_mapping(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_mapping", args));
  return v.is_dict();
}

// iter(x) works: strings, sequences, dicts, generators, the loop, and (in Jinja2) Undefined.
Result<bool> test_iterable(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_iterable", args));
  if (v.is_object()) return v.as_object().type_name() == "LoopContext";
  return v.is_undefined() || v.is_string() || v.is_sequence() || v.is_dict();
}

// len(x) and x[...] both exist: strings, lists, tuples, ranges, dicts, and Undefined.
Result<bool> test_sequence(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_sequence", args));
  if (v.is_sequence()) return v.is_list() || v.is_tuple() || v.flavor() == ListFlavor::kRange;
  return v.is_undefined() || v.is_string() || v.is_dict();
}

Result<bool> test_callable(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_callable", args));
  if (v.is_object()) return v.as_object().type_name() == "LoopContext";
  return v.is_callable() || v.is_undefined();
}

Result<bool> test_escaped(Interpreter&, const Value&, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_escaped", args));
  return false;
}

Result<bool> parity(Interpreter& interpreter, const Value& v, const CallArgs& args, const char* test,
                    int64_t rest) {
  SINTER_TRY(expect_no_arguments(test, args));
  SINTER_ASSIGN(Value mod,
                binary_operation(BinaryOp::kMod, v, Value(2), interpreter.options().limits.max_output_bytes));
  return equals(mod, Value(rest));
}
Result<bool> test_odd(Interpreter& i, const Value& v, const CallArgs& args) {
  return parity(i, v, args, "test_odd", 1);
}
Result<bool> test_even(Interpreter& i, const Value& v, const CallArgs& args) {
  return parity(i, v, args, "test_even", 0);
}

Result<bool> test_divisibleby(Interpreter& interpreter, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(auto a, BoundArguments::bind("test_divisibleby", args, {"num"}, 1));
  SINTER_ASSIGN(Value mod,
                binary_operation(BinaryOp::kMod, v, a.get(0), interpreter.options().limits.max_output_bytes));
  return equals(mod, Value(0));
}

Result<bool> test_lower(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_lower", args));
  return py::is_lower_string(to_str(v));
}
Result<bool> test_upper(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_upper", args));
  return py::is_upper_string(to_str(v));
}

Result<bool> test_eq(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(Value other, one_argument("eq", args));
  return equals(v, other);
}
Result<bool> test_ne(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(Value other, one_argument("ne", args));
  return !equals(v, other);
}
Result<bool> test_lt(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(Value other, one_argument("lt", args));
  return ordered(v, other, Ordering::kLess);
}
Result<bool> test_le(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(Value other, one_argument("le", args));
  return ordered(v, other, Ordering::kLessEqual);
}
Result<bool> test_gt(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(Value other, one_argument("gt", args));
  return ordered(v, other, Ordering::kGreater);
}
Result<bool> test_ge(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(Value other, one_argument("ge", args));
  return ordered(v, other, Ordering::kGreaterEqual);
}
Result<bool> test_in(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(auto a, BoundArguments::bind("test_in", args, {"seq"}, 1));
  return contains(a.get(0), v);
}
Result<bool> test_sameas(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_ASSIGN(Value other, one_argument("sameas", args));
  if (v.is_number() != other.is_number() || v.is_bool() != other.is_bool()) return false;
  return v.same_object(other);
}
Result<bool> test_filter(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_filter", args));
  return v.is_string() && find_filter(v.as_string()) != nullptr;
}
Result<bool> test_test(Interpreter&, const Value& v, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("test_test", args));
  return v.is_string() && find_test(v.as_string()) != nullptr;
}

constexpr TestEntry kTests[] = {
    {"!=", test_ne},
    {"<", test_lt},
    {"<=", test_le},
    {"==", test_eq},
    {">", test_gt},
    {">=", test_ge},
    {"boolean", test_boolean},
    {"callable", test_callable},
    {"defined", test_defined},
    {"divisibleby", test_divisibleby},
    {"eq", test_eq},
    {"equalto", test_eq},
    {"escaped", test_escaped},
    {"even", test_even},
    {"false", test_false},
    {"filter", test_filter},
    {"float", test_float},
    {"ge", test_ge},
    {"greaterthan", test_gt},
    {"gt", test_gt},
    {"in", test_in},
    {"integer", test_integer},
    {"iterable", test_iterable},
    {"le", test_le},
    {"lessthan", test_lt},
    {"lower", test_lower},
    {"lt", test_lt},
    {"mapping", test_mapping},
    {"ne", test_ne},
    {"none", test_none},
    {"number", test_number},
    {"odd", test_odd},
    {"sameas", test_sameas},
    {"sequence", test_sequence},
    {"string", test_string},
    {"test", test_test},
    {"true", test_true},
    {"undefined", test_undefined},
    {"upper", test_upper},
};

}  // namespace

std::span<const TestEntry> builtin_tests() { return kTests; }

}  // namespace sinter::chat::jinja
