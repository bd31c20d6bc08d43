// The limits a grammar runs under, and the budget of work one sampling step may spend on it.
//
// A grammar comes from outside (an HTTP request, a JSON schema's `pattern`), and the scheduler
// samples every sequence of a pass on one thread: a grammar that costs seconds per token stalls
// every other request on the model. So the work is bounded three ways:
//
//   states   the distinct parses (matcher stacks) alive after one character, duplicates merged;
//   work     units counted per sampling step: a trie node visited, a stack checked against a
//            character, a stack popped while expanding rules (each a few to a few hundred ns);
//   time     the CPU time the step's thread spends, read every kClockInterval units: a backstop
//            for a cost the units do not see. CPU time, not wall time: on a busy machine a real
//            mask waits for the processor, and a wall-clock deadline would fail it. The clock
//            (a system call) is first read after kClockInterval units, so that the many cheap
//            steps never read it; those first units (well under a millisecond) go untimed.
//
// Exceeding one is an error naming the limit; the sequence ends with it, the others go on.
//
//   GrammarBudget budget(grammar.limits);           // one per sampling step
//   if (!budget.spend(1)) return budget.exceeded();
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "sinter/result.h"

namespace sinter {

struct GrammarLimits {
  size_t max_stacks = 1024;         // distinct parses alive at once, after duplicates merge
  size_t max_stack_depth = 8192;    // nested rules on one stack (recursion bound)
  size_t max_expansion = 1u << 16;  // stacks popped while expanding after one character
  // Work units per sampling step: one sample() (the fast path's check, the mask over the
  // vocabulary) or one accept(). The most permissive real mask measured, json.gbnf inside a string
  // over a 128k-token vocabulary, takes 2.7 M; 16.8 M is about 0.8 s of processor time
  // (docs/SAMPLING.md, "Bounds on grammar work").
  uint64_t max_step_work = uint64_t{1} << 24;
  // CPU time of the calling thread per sampling step; zero: none. That mask takes up to 0.1 s
  // of it (0.35 s of wall time on a busy 2-core machine).
  std::chrono::nanoseconds max_step_cpu_time = std::chrono::seconds(1);
};

class GrammarBudget {
 public:
  // The CPU time is the calling thread's (the one that spends the budget).
  explicit GrammarBudget(const GrammarLimits& limits);

  // Counts `units` of work; false once the step's work or time is exhausted (then exceeded()
  // says which, and every later call is false too).
  bool spend(uint64_t units) {
    used_ += units;
    return used_ < next_check_ || check();
  }
  // The error for the limit that spend() ran into.
  Error exceeded() const;

  // Records that `count` parses are alive (for measurements: peak_states()).
  void note_states(size_t count) {
    if (count > peak_states_) peak_states_ = count;
  }

  uint64_t used() const { return used_; }
  size_t peak_states() const { return peak_states_; }

 private:
  static constexpr uint64_t kClockInterval = 4096;

  bool check();

  GrammarLimits limits_;
  std::chrono::nanoseconds deadline_{0};  // on the thread's CPU clock; 0: not read yet
  uint64_t used_ = 0;
  uint64_t next_check_ = 0;
  size_t peak_states_ = 0;
  bool out_of_time_ = false;
};

}  // namespace sinter
