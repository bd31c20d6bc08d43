#include "sample/grammar/grammar_budget.h"

#include <time.h>

#include <algorithm>
#include <limits>

namespace sinter {
namespace {

// The first count past `limit` (saturating).
uint64_t past(uint64_t limit) { return limit == std::numeric_limits<uint64_t>::max() ? limit : limit + 1; }

// CPU time the calling thread has used (a system call: read it rarely).
std::chrono::nanoseconds thread_cpu_time() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace

GrammarBudget::GrammarBudget(const GrammarLimits& limits)
    : limits_(limits), next_check_(std::min(kClockInterval, past(limits.max_step_work))) {}

bool GrammarBudget::check() {
  if (out_of_time_ || used_ > limits_.max_step_work) return false;
  if (limits_.max_step_cpu_time.count() > 0) {
    const std::chrono::nanoseconds now = thread_cpu_time();
    if (deadline_.count() == 0) {
      deadline_ = now + limits_.max_step_cpu_time;
    } else if (now >= deadline_) {
      out_of_time_ = true;
      return false;
    }
  }
  next_check_ = std::min(used_ + kClockInterval, past(limits_.max_step_work));
  return true;
}

Error GrammarBudget::exceeded() const {
  if (out_of_time_) {
    const double ms = std::chrono::duration<double, std::milli>(limits_.max_step_cpu_time).count();
    return make_error(ErrorCode::kInvalidArgument, "grammar: choosing one token took more than ", ms,
                      " ms of processor time; simplify the grammar");
  }
  return make_error(ErrorCode::kInvalidArgument, "grammar: choosing one token needs more than ",
                    limits_.max_step_work,
                    " steps of grammar work (the grammar is too ambiguous here); simplify the grammar");
}

}  // namespace sinter
