#include "chat/jinja/arguments.h"

#include "chat/jinja/errors.h"

namespace sinter::chat::jinja {

Result<BoundArguments> BoundArguments::bind(std::string_view function, const CallArgs& args,
                                            std::initializer_list<std::string_view> parameters,
                                            size_t required) {
  BoundArguments bound;
  bound.values_.resize(parameters.size());
  std::vector<std::string_view> names(parameters);
  if (args.positional.size() > names.size()) {
    return type_error(concat(function, "() takes at most ", names.size(), " argument",
                             names.size() == 1 ? "" : "s", " (", args.positional.size(), " given)"));
  }
  for (size_t i = 0; i < args.positional.size(); ++i) bound.values_[i] = args.positional[i];
  for (const auto& [key, value] : args.keyword) {
    size_t index = 0;
    while (index < names.size() && names[index] != key) ++index;
    if (index == names.size()) {
      return type_error(concat(function, "() got an unexpected keyword argument '", key, "'"));
    }
    if (bound.values_[index]) {
      return type_error(concat(function, "() got multiple values for argument '", key, "'"));
    }
    bound.values_[index] = value;
  }
  for (size_t i = 0; i < required && i < names.size(); ++i) {
    if (!bound.values_[i]) {
      return type_error(concat(function, "() missing required argument '", names[i], "'"));
    }
  }
  return bound;
}

Status expect_no_arguments(std::string_view function, const CallArgs& args) {
  if (!args.positional.empty() || !args.keyword.empty()) {
    return type_error(concat(function, "() takes no arguments"));
  }
  return ok_status();
}

}  // namespace sinter::chat::jinja
