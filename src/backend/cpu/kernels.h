// The matrix-product kernels of the CPU backend and the data layouts they share.
//
// Weights that a SIMD kernel handles are repacked at load into groups of 16 rows (PackedMatrix,
// layouts in docs/KERNELS.md): one vector register holds one value (or 4 bytes) of each of the 16
// rows, so every output row lives in its own vector lane and keeps one float accumulator that
// visits the blocks in order — the reduction the reference dot products define
// (src/tensor/vec_dot.h), bit for bit, whatever the number of columns, the tile or the thread.
//
// Activation columns are rounded to the weight type's activation format (Q8_0, Q8_1, Q8_K, F16,
// BF16) into a planar layout (ColumnLayout): the int8 values, then one float scale per block,
// then per-group integer sums that fold the weights' offsets (−8 for Q4_0, ...) into the integer
// dot products.
//
// This header is included by the per-ISA files, which are compiled with their own instruction
// set flags: it declares data and functions only (no inline code that the linker could take from
// an AVX-512 object for a generic caller).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.h"
#include "tensor/dtype.h"

namespace sinter::cpu {

constexpr int kGroupRows = 16;  // rows interleaved in one packed group

// W [n_in, n_out] in groups of 16 rows; the last group is padded with zero rows.
struct PackedMatrix {
  DType type = DType::F32;
  int64_t n_in = 0;
  int64_t n_out = 0;
  int64_t groups = 0;             // ceil(n_out / 16)
  size_t group_bytes = 0;         // bytes of one group (a multiple of 64)
  const uint8_t* data = nullptr;  // 64-byte aligned
};

// How activations are rounded for a weight type, and the integer sums its kernels need.
struct ActivationFormat {
  DType format = DType::F32;  // Q8_0, Q8_1, Q8_K, F16, BF16 or F32
  int32_t sum_group = 0;      // values per integer sum (16 or 32; 0: none; Q8_1 stores s instead)
  int32_t sum_scale = 0;      // each sum is multiplied by this (−8 for Q4_0, ...)
};

// One column of n values in the planar layout:
//   Q8_0/Q8_1/Q8_K: int8 q[n] | float d[n / block] | int32 sums[n / sum_group] (Q8_1: float s[n / 32])
//   F16/BF16/F32:   float x[n] (F16/BF16: the rounded values, widened)
struct ColumnLayout {
  int64_t n = 0;
  size_t scale_offset = 0;
  size_t sum_offset = 0;
  size_t bytes = 0;  // a multiple of 64; columns follow each other at this stride
};

// Rounds one activation column (n values, n a multiple of the format's block size) into the
// planar layout at `column` (64-byte aligned).
using QuantizeColumnFn = void (*)(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                                  uint8_t* column);

// dst[c][r] = Σ_k W[r][k] · X[c][k] for the rows of groups [group_begin, group_end) and the
// `column_count` columns at `columns` (stride layout.bytes). dst column c starts at
// dst + c·dst_stride floats; rows at or beyond n_out are not written.
using GemmFn = void (*)(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
                        const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride);

struct KernelSet {
  IsaLevel level = IsaLevel::kGeneric;
  QuantizeColumnFn quantize = nullptr;
  // By weight type: GGUF ids below 40 (nullptr: no packed kernel; the plain path runs).
  GemmFn gemm[40] = {};
};

// The kernels of one ISA level (which must be supported by this CPU to be run).
const KernelSet& kernels_for(IsaLevel level);
// The kernels of selected_isa_level().
const KernelSet& active_kernels();
GemmFn gemm_kernel(const KernelSet& set, DType weight);

ActivationFormat activation_format(DType weight);
ColumnLayout column_layout(const ActivationFormat& format, int64_t n);

// Generic level: the reference quantizers (src/tensor), written in the planar layout.
void quantize_column_generic(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                             uint8_t* column);

// Per-ISA kernel tables (kernels_isa.cpp); null when not built.
const KernelSet* avx2_kernel_set();
const KernelSet* avx512_kernel_set();

}  // namespace sinter::cpu
