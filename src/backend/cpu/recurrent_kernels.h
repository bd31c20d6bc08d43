// The recurrent layers' kernels (Mamba's convolution and selective scan, graph.h), one version
// per ISA level. Vector lanes hold channels (the convolution) or rows of the scan's state (a row
// is one element i of one head h: its d_state values), never the values one output sums, so each
// lane runs exactly the scalar definition: every level gives the reference backend's bits, except
// that the AVX2 and AVX-512 scans of Mamba-1 (A per state value) take e^x from the polynomial of
// exp_polynomial.h (~1 ulp) for the decay of every state value.
//
// The tokens of the batch are grouped by slot (SlotRuns), each group in batch order. Groups touch
// different state planes, so the grouping changes no bit. The scan moves a slot's state rows into
// lane order (transposed) once for all the slot's tokens, and back; a slot's only token
// (generation) is computed on the rows where they lie, along the state values, and only the
// updated values are transposed, for the output's sums.
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

// Graph::ssm_scan's operands, rows r = i + h·head_dim. Token t's x [head_dim, H] at
// x + t·x_stride, its B and C [d_state, G] at b + t·b_stride and c + t·c_stride; dts [T, H] holds
// softplus(dt) of every token and head, and `decay` [T, H] e^(dts·A[0, h]) when A is [1, H]
// (null when A [d_state, H] has one per state value: `a`). state [d_state, head_dim, H, S] and
// y [head_dim, H, T] contiguous.
struct SsmScanArgs {
  const float* x;
  int64_t x_stride;
  const float* dts;
  const float* decay;
  const float* a;
  const float* b;
  int64_t b_stride;
  const float* c;
  int64_t c_stride;
  float* state;
  float* y;
  int64_t d_state;
  int64_t head_dim;
  int64_t n_head;
  int64_t n_group;
};

// Channels [begin, end) of every token, in blocks of the level's lanes.
using SsmConvFn = void (*)(const SsmConvArgs& args, const SlotRuns& runs, int64_t begin, int64_t end,
                           float* scratch);
// Tiles [begin, end): a tile is up to `lanes` consecutive rows of one group (B and C are then
// the same for all its rows); group g's rows are tiles g·tiles_per_group ...
using SsmScanFn = void (*)(const SsmScanArgs& args, const SlotRuns& runs, int64_t begin, int64_t end,
                           float* scratch);

struct RecurrentKernels {
  int lanes = 0;
  SsmConvFn conv = nullptr;
  SsmScanFn scan = nullptr;
  explicit operator bool() const { return conv != nullptr; }  // built (for isa_dispatch.h)
};

// Lanes of the widest level, and the vectors of channels (tiles of rows) the convolution (the
// scan) runs together: what the scratch sizes below allow for.
constexpr int kMaxRecurrentLanes = 16;
constexpr int kScanTileBlock = 4;
constexpr int kConvBlock = 4;
// Floats of scratch the kernels need (any level).
size_t ssm_conv_kernel_floats(int64_t k);
size_t ssm_scan_kernel_floats(int64_t d_state);
// The scan's tiles per group with `lanes` rows a tile.
int64_t ssm_scan_tiles_per_group(const SsmScanArgs& args, int lanes);

// The version for selected_isa_level(), and each level's (empty where not built).
const RecurrentKernels& recurrent_kernels();
RecurrentKernels recurrent_kernels_for(IsaLevel level);
RecurrentKernels recurrent_kernels_generic();
RecurrentKernels recurrent_kernels_avx2();
RecurrentKernels recurrent_kernels_avx512();

}  // namespace sinter::cpu
