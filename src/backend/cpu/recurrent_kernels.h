// The recurrent layers' kernels (Mamba's convolution, graph.h), one version per ISA level. Vector
// lanes hold channels, never the values one output sums, so each lane runs exactly the scalar
// definition: every level gives the reference backend's bits.
//
// The tokens of the batch are grouped by slot (SlotRuns), each group in batch order. Groups touch
// different state planes, so the grouping changes no bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.h"

namespace sinter::cpu {

// The batch's tokens grouped by slot: run j is tokens[begin[j] .. begin[j + 1]), all of slot
// slot[j], in batch order.
struct SlotRuns {
  const int32_t* tokens;
  const int32_t* begin;  // [count + 1]
  const int32_t* slot;   // [count]
  int64_t count;
};

// Graph::ssm_conv's operands. Token t's x values at x + t·x_stride; weight [k, d], state
// [k - 1, d, S] and y [d, T] contiguous.
struct SsmConvArgs {
  const float* x;
  int64_t x_stride;
  const float* weight;
  float* state;
  float* y;
  int64_t k;
  int64_t channels;
};

// Channels [begin, end) of every token, in blocks of the level's lanes.
using SsmConvFn = void (*)(const SsmConvArgs& args, const SlotRuns& runs, int64_t begin, int64_t end,
                           float* scratch);
struct RecurrentKernels {
  int lanes = 0;
  SsmConvFn conv = nullptr;
  explicit operator bool() const { return conv != nullptr; }  // built (for isa_dispatch.h)
};

// Lanes of the widest level, and the vectors of channels the convolution runs together: what the
// scratch sizes below allow for.
constexpr int kMaxRecurrentLanes = 16;
constexpr int kConvBlock = 4;
// Floats of scratch the kernels need (any level).
size_t ssm_conv_kernel_floats(int64_t k);

// The version for selected_isa_level(), and each level's (empty where not built).
const RecurrentKernels& recurrent_kernels();
RecurrentKernels recurrent_kernels_for(IsaLevel level);
RecurrentKernels recurrent_kernels_generic();
RecurrentKernels recurrent_kernels_avx2();
RecurrentKernels recurrent_kernels_avx512();

}  // namespace sinter::cpu
