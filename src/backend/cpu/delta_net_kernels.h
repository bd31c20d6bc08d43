// The gated delta rule (Graph::gated_delta_net) for one value head over a run of consecutive
// tokens of one state slot, one version per ISA level (like the WKV kernels). Every version
// computes each value of the reference's formula (graph.h, reference/ref_delta_net.cpp) with the
// same operations in the same order, so all levels give the reference's bits: the vectors run
// across the value index (a column of the state per lane), and every sum is one fma chain over
// the key index, in order.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace sinter::cpu {

// A head's state is d_k rows of d_v floats: the value index contiguous (state[key · d_v + value]).
// Each per-token pointer is the run's first token's values; token t's lie t strides (in floats)
// further: q and k [d_k], v [d_v], g one float (or d_k with a per-key gate), beta one float,
// the output y [d_v].
struct DeltaNetRun {
  const float* q;
  const float* k;
  const float* v;
  const float* g;     // the log of the decay: one per token, or d_k (per_key_gate)
  const float* beta;  // the write strength
  float* state;       // read and updated in place
  float* y;
  int64_t d_k;
  int64_t d_v;
  int64_t count;  // tokens in the run
  int64_t q_stride;
  int64_t k_stride;
  int64_t v_stride;
  int64_t g_stride;
  int64_t beta_stride;
  int64_t y_stride;
  float scale;                // of the read-out
  bool per_key_gate = false;  // Kimi's KDA: a decay per key index (d_k <= kMaxDeltaNetKeys)
};

// The largest key head a per-key gate allows (the kernels keep a token's decays on the stack;
// Graph::gated_delta_net checks it).
constexpr int64_t kMaxDeltaNetKeys = 512;

using DeltaNetRunFn = void (*)(const DeltaNetRun& run);

struct DeltaNetKernels {
  DeltaNetRunFn run = nullptr;
  explicit operator bool() const { return run != nullptr; }  // built (for isa_dispatch.h)
};

// The version for selected_isa_level(), and each level's (empty where not built).
const DeltaNetKernels& delta_net_kernels();
DeltaNetKernels delta_net_kernels_for(IsaLevel level);
DeltaNetKernels delta_net_kernels_generic();
DeltaNetKernels delta_net_kernels_avx2();
DeltaNetKernels delta_net_kernels_avx512();

}  // namespace sinter::cpu
