// The global functions a template can call: Jinja2's range, dict, namespace, cycler and joiner,
// and Hugging Face's raise_exception and strftime_now.
#pragma once

#include "chat/jinja/interpreter.h"

namespace sinter::chat::jinja {

void add_builtin_globals(Scope* scope);

}  // namespace sinter::chat::jinja
