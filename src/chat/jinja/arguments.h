// Binding call arguments to named parameters, as Python binds them for a built-in with a
// signature such as indent(width=4, first=False, blank=False).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

class BoundArguments {
 public:
  // Positional arguments fill `parameters` in order, then keywords by name. Extra or unknown
  // arguments, and any of the first `required` parameters left unbound, are TypeErrors naming
  // `function`.
  static Result<BoundArguments> bind(std::string_view function, const CallArgs& args,
                                     std::initializer_list<std::string_view> parameters, size_t required = 0);

  bool has(size_t index) const { return index < values_.size() && values_[index].has_value(); }
  // The argument, or `fallback` when it was not given.
  Value get(size_t index, Value fallback = Value()) const { return has(index) ? *values_[index] : fallback; }

 private:
  std::vector<std::optional<Value>> values_;
};

// Shorthand for built-ins without parameters.
Status expect_no_arguments(std::string_view function, const CallArgs& args);

}  // namespace sinter::chat::jinja
