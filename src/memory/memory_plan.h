// The memory plan of an inference context: what its KV cache, the cells' bookkeeping and its
// compute buffers need, checked against what the machine has before anything is allocated, so
// that `-c 10000000` on a small machine is refused with both figures instead of running out of
// memory half-way (or being killed by the system).
//
// The check counts the whole cache although its memory is committed only as tokens fill it
// (kv_cache.h): a context must fit when it is full. It lets the context take at most 7/8 of the
// available memory (core/memory_info.h); the rest stays for the page cache that holds mapped
// weights, graphs of other shapes, and other processes.
#pragma once

#include <cstdint>
#include <optional>

#include "core/memory_info.h"
#include "sinter/result.h"

namespace sinter {

struct ContextMemory {
  int32_t n_ctx = 0;
  uint64_t kv_bytes = 0;           // keys and values of every cell
  uint64_t bookkeeping_bytes = 0;  // cell records, position lists, attention index
  uint64_t compute_bytes = 0;      // the arena and scratch of the largest forward pass
  uint64_t total() const { return kv_bytes + bookkeeping_bytes + compute_bytes; }
};

// The part of `available` bytes a context may take.
uint64_t usable_memory(uint64_t available);

// An error naming what the context needs and what is available when it does not fit; ok when it
// fits or when the available memory is unknown (nothing to check against).
Status check_context_fits(const ContextMemory& need, const std::optional<AvailableMemory>& available);

}  // namespace sinter
