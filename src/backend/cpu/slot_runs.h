// Runs of consecutive batch tokens of one state slot, for the recurrent ops whose threads split
// heads (the WKV ops, the gated delta rule): each thread hands its kernel one run at a time and
// the slot's state passes from run to run through the state tensor. A run also ends at a token
// whose state is kept as a snapshot (graph.h), so the state can be copied right after it.
#pragma once

#include <cstdint>

namespace sinter::cpu {

// Calls run(first, count, slot, snapshot) for each run, in batch order: tokens first ..
// first + count − 1 of slot `slot`; `snapshot` is the plane that receives the slot's state after
// the run's last token, or −1. `snapshots` may be null (none).
template <class Run>
void for_each_slot_run(const int32_t* slots, const int32_t* snapshots, int64_t tokens, Run&& run) {
  for (int64_t first = 0, count; first < tokens; first += count) {
    count = 1;
    while (first + count < tokens && slots[first + count] == slots[first] &&
           (snapshots == nullptr || snapshots[first + count - 1] < 0))
      ++count;
    run(first, count, slots[first], snapshots != nullptr ? snapshots[first + count - 1] : -1);
  }
}

}  // namespace sinter::cpu
