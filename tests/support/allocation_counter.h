// Counts the calls of the global operator new (every form, on every thread) while a
// CountingAllocations is alive: for tests that a path allocates nothing. The test executable that
// uses it links allocation_counter.cpp, which replaces the global allocation functions.
#pragma once

namespace sinter::testing {

class CountingAllocations {
 public:
  CountingAllocations();
  ~CountingAllocations();
  CountingAllocations(const CountingAllocations&) = delete;
  CountingAllocations& operator=(const CountingAllocations&) = delete;
  long count() const;
};

}  // namespace sinter::testing
