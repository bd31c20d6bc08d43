// Execution of parsed Go templates (text/template/exec.go): walks a tree over a data value and
// writes the output, with Go's rules for pipelines, variables, field access, function calls,
// if/with/range/template, break/continue and printing, and Go's error messages
// ("template: :1:3: executing \"\" at <.Foo>: ...").
//
// Runaway templates stop with an error when they exceed the budget: output bytes, bytes of
// strings made by functions, evaluation steps, or the depth of {{template}} calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "chat/gotemplate/ast.h"
#include "chat/gotemplate/functions.h"
#include "chat/gotemplate/value.h"
#include "sinter/result.h"

namespace sinter::chat::gotemplate {

struct ExecBudget {
  size_t max_output_bytes = 8u << 20;
  size_t max_value_bytes = 32u << 20;  // all strings functions return, together
  uint64_t max_steps = 10'000'000;     // nodes walked and commands evaluated
  int max_template_depth = 100;        // nested {{template}} calls
};

// Work done so far, shared by several executions that share one budget.
struct ExecCounters {
  uint64_t steps = 0;
  size_t value_bytes = 0;
};

struct ExecOptions {
  // Option("missingkey=zero"): a missing map key yields the zero value of the element type
  // (otherwise the invalid value, printed "<no value>").
  bool missing_key_zero = false;
  // Functions besides the builtins (Ollama's), or null.
  const FunctionTable* functions = nullptr;
  CallContext context;
  ExecBudget budget;
  ExecCounters* counters = nullptr;  // null: this execution counts on its own
};

// Executes `root` (the body of the template named `name` in `templates`) with `data` as dot,
// appending to *out. {{template "x"}} looks "x" up in `templates`.
Status execute_template(const TreeSet& templates, const std::string& name, const Node& root,
                        const Value& data, const ExecOptions& options, std::string* out);

}  // namespace sinter::chat::gotemplate
