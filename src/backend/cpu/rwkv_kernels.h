// RWKV's WKV recurrences (Graph::rwkv_wkv6 / rwkv_wkv7) for one head over a run of consecutive
// tokens of one state slot, one version per ISA level (like the activation functions). Every
// version computes each value of the reference's formula (graph.h, reference/ref_rwkv.cpp) with
// the same operations in the same order, so all levels give the reference's bits: the vectors
// run across the value index, and every sum is one fma chain over the key index, in order.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace sinter::cpu {

// A head's state is n × n floats: the value index contiguous, the key index along rows
// (state[key · n + value]). Each per-token pointer is token 0's row of the head ([n] values);
// token t's is `stride` floats further (N·H for [N, H, T] inputs), and so is its output row.
struct Wkv6Run {
  const float* k;
  const float* v;
  const float* r;
  const float* w;  // the decay factor
  const float* u;  // [n]: the head's time_first, the same for every token
  float* state;    // read and updated in place
  float* y;
  int64_t n;
  int64_t count;  // tokens in the run
  int64_t stride;
};

struct Wkv7Run {
  const float* r;
  const float* w;  // the decay factor
  const float* k;
  const float* v;
  const float* a;
  const float* b;
  float* state;  // read and updated in place
  float* y;
  int64_t n;
  int64_t count;
  int64_t stride;
};

using Wkv6RunFn = void (*)(const Wkv6Run& run);
using Wkv7RunFn = void (*)(const Wkv7Run& run);

struct RwkvKernels {
  Wkv6RunFn wkv6 = nullptr;
  Wkv7RunFn wkv7 = nullptr;
  explicit operator bool() const { return wkv6 != nullptr; }  // built (for isa_dispatch.h)
};

// The versions for selected_isa_level(), and each level's (empty where not built).
const RwkvKernels& rwkv_kernels();
RwkvKernels rwkv_kernels_for(IsaLevel level);
RwkvKernels rwkv_kernels_generic();
RwkvKernels rwkv_kernels_avx2();
RwkvKernels rwkv_kernels_avx512();

}  // namespace sinter::cpu
