// Python's arithmetic on template values: + - * / // % ** and unary - +, with Python's results
// (7 // -2 == -4, 7 / 2 == 3.5, 'ab' * 2, [1] + [2], "%s" % x) and Python's TypeError messages.
#pragma once

#include <cstddef>
#include <string>

#include "chat/jinja/ast.h"
#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

// `max_bytes` bounds strings and lists built by + and * (a guard against runaway templates).
Result<Value> binary_operation(BinaryOp op, const Value& a, const Value& b, size_t max_bytes);
Result<Value> negate(const Value& value);
Result<Value> unary_plus(const Value& value);

// printf-style formatting: format % args (a tuple for several values, a dict for %(name)s).
Result<std::string> percent_format(const std::string& format, const Value& args);

}  // namespace sinter::chat::jinja
