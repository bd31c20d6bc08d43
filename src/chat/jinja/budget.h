// The budget of one render: how much work, nesting, time and memory a template may use before the
// render stops with "template limit exceeded: ..." (ErrorCode::kInvalidArgument: a client-given
// template that exceeds it is the request's fault, and the server answers 400).
//
// The interpreter charges a step for every statement it executes and every expression it
// evaluates; value operations charge the items they walk (iterating, `in`, sorting) and a step
// per 256 bytes they compare or scan, so a loop over big values costs what it does. The clock is
// read every few dozen steps. Operations that have no Interpreter at hand (repr(), tojson, `in`)
// reach the budget of the render running on their thread through RenderBudget::current().
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "sinter/result.h"

namespace sinter::chat::jinja {

// Defaults are far above what real chat templates need (30-110 steps per message, nesting
// in the tens) and low enough that a hostile template ends in seconds without exhausting memory
// or the stack.
struct RenderLimits {
  int max_call_depth = 200;                    // nested macro calls (Python's recursion limit is near)
  int max_depth = 1000;                        // nested statements, expressions and calls, all macro levels
  int64_t max_loop_iterations = 5'000'000;     // all loops of one render together
  uint64_t max_steps = 100'000'000;            // statements, expressions, items walked (see above)
  std::chrono::milliseconds max_time{10'000};  // wall clock of one render
  size_t max_output_bytes = size_t{64} << 20;  // the rendered text, and any one string or list built
  // All strings and lists that expressions build during one render, together: bounds memory
  // when a template keeps many large values (in a namespace, a list, nested macro calls).
  size_t max_built_bytes = size_t{256} << 20;
};

class RenderBudget {
 public:
  // Becomes the budget of the render running on this thread until it is destroyed.
  explicit RenderBudget(const RenderLimits& limits);
  ~RenderBudget();
  RenderBudget(const RenderBudget&) = delete;
  RenderBudget& operator=(const RenderBudget&) = delete;

  // The budget of the render running on this thread, or null.
  static RenderBudget* current();

  // Charges `count` steps; fails past max_steps or max_time (and keeps failing after).
  Status step(uint64_t count = 1);
  // Records a failure of an operation that cannot return one (repr() stopping at the size cap, a
  // comparison over budget): the next step() and check() report it. The first one is kept.
  void refuse(Error error);
  // The recorded failure, if any: called when the render ends.
  Status check() const;
  // Enters one level of nesting (leave() after); fails past max_depth.
  Status enter();
  void leave() { --depth_; }

  const RenderLimits& limits() const { return limits_; }

 private:
  RenderLimits limits_;
  uint64_t steps_ = 0;
  uint64_t next_clock_check_ = 0;
  int depth_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<Error> failure_;
  RenderBudget* previous_;
};

// refuse() on the running render, if any.
void refuse_in_render(Error error);
// Charges the running render (if any) `count` steps.
Status charge_steps(uint64_t count);
// Charges the running render a step per 256 bytes an operation scans or compares.
Status charge_scanned_bytes(size_t bytes);
// The largest text or list (in bytes) one operation may build in the running render; no limit
// outside a render.
size_t value_size_cap();

}  // namespace sinter::chat::jinja
