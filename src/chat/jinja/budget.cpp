#include "chat/jinja/budget.h"

#include "chat/jinja/errors.h"

namespace sinter::chat::jinja {
namespace {

thread_local RenderBudget* current_budget = nullptr;

// steady_clock::now() costs tens of nanoseconds, a step a few: read it every kClockInterval steps.
constexpr uint64_t kClockInterval = 32;
constexpr size_t kBytesPerStep = 256;

}  // namespace

RenderBudget::RenderBudget(const RenderLimits& limits)
    : limits_(limits),
      deadline_(std::chrono::steady_clock::now() + limits.max_time),
      previous_(current_budget) {
  current_budget = this;
}

RenderBudget::~RenderBudget() { current_budget = previous_; }

RenderBudget* RenderBudget::current() { return current_budget; }

Status RenderBudget::step(uint64_t count) {
  steps_ += count;
  if (failure_) return *failure_;
  if (steps_ > limits_.max_steps) {
    failure_ = limit_error(concat("more than ", limits_.max_steps, " evaluation steps"));
    return *failure_;
  }
  if (steps_ >= next_clock_check_) {
    next_clock_check_ = steps_ + kClockInterval;
    if (std::chrono::steady_clock::now() > deadline_) {
      failure_ = limit_error(concat("rendering took longer than ", limits_.max_time.count(), " ms"));
      return *failure_;
    }
  }
  return ok_status();
}

void RenderBudget::refuse(Error error) {
  if (!failure_) failure_ = std::move(error);
}

Status RenderBudget::check() const {
  if (failure_) return *failure_;
  return ok_status();
}

Status RenderBudget::enter() {
  if (depth_ >= limits_.max_depth)
    return limit_error(concat("evaluation nested deeper than ", limits_.max_depth, " levels"));
  ++depth_;
  return ok_status();
}

void refuse_in_render(Error error) {
  if (RenderBudget* budget = RenderBudget::current()) budget->refuse(std::move(error));
}

Status charge_steps(uint64_t count) {
  RenderBudget* budget = RenderBudget::current();
  return budget ? budget->step(count) : ok_status();
}

Status charge_scanned_bytes(size_t bytes) { return charge_steps(bytes / kBytesPerStep); }

size_t value_size_cap() {
  RenderBudget* budget = RenderBudget::current();
  return budget ? budget->limits().max_output_bytes : std::numeric_limits<size_t>::max();
}

}  // namespace sinter::chat::jinja
