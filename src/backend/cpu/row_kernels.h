// Row conversions and reductions of the CPU ops, one version per ISA level (like the activation
// functions): F32 rows written as F16 (the KV cache's stores and shifts, copies to F16), and the
// sum of squares of RMS norm. Every version gives the generic one's bits: the F16 rounding is the
// reference's (quantize_row_f16), and the sum of squares is added in one fixed order of double
// partial sums (below) that every version follows.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "tensor/dtype.h"

namespace sinter::cpu {

// out[i] = the F16 bits of in[i], rounded to nearest even (quantize_row_f16's results, NaN too).
using F16RowFn = void (*)(const float* in, void* out, int64_t n);

// Σ double(x[i]·x[i]) (each square rounded in float, as the reference computes it), summed in
// this order: value i of the first n − n % 8 goes to partial sum i % 8; the partials combine as
// ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)); the last n % 8 squares are then added one
// by one. (Double sums of float squares: the order changes the norm's float result only when the
// sum lies within ~1e-16 of a float rounding boundary.)
using SumSquaresFn = double (*)(const float* x, int64_t n);

// The end of that order, shared by every version: the 8 partial sums combined, then the squares
// of x[from..n) added one by one.
inline double combine_sum_squares(const double (&s)[8], const float* x, int64_t from, int64_t n) {
  double total = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
  for (int64_t i = from; i < n; ++i) total += static_cast<double>(x[i] * x[i]);
  return total;
}

struct RowKernels {
  F16RowFn to_f16;
  SumSquaresFn sum_squares;
  explicit operator bool() const { return to_f16 != nullptr; }  // built (for isa_dispatch.h)
};

// The versions for selected_isa_level(), and each level's (null members where not built).
const RowKernels& row_kernels();
RowKernels row_kernels_for(IsaLevel level);
double sum_squares_generic(const float* x, int64_t n);
RowKernels row_kernels_avx2();
RowKernels row_kernels_avx512();

// How the CPU ops write F32 rows as `type`: the F16 version above, or the type's reference
// quantizer (nullptr where it has none).
QuantizeRowFn row_writer(DType type);

}  // namespace sinter::cpu
