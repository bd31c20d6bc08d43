// The Python methods of str, list, tuple and dict that templates call: 'a,b'.split(','),
// message.content.startswith('<'), tool.items(), ...
#pragma once

#include <string_view>

#include "chat/jinja/interpreter.h"
#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

enum class MethodKind {
  kNone,      // the type has no such method
  kSafe,      // allowed in the sandbox
  kMutating,  // modifies a list or dict: forbidden unless RenderOptions::allow_mutation
};

MethodKind method_kind(const Value& self, std::string_view name);
Result<Value> call_method(Interpreter& interpreter, const Value& self, std::string_view name,
                          const CallArgs& args);

}  // namespace sinter::chat::jinja
