// Row kernels (row_kernels.h) written once over an ISA's vector traits V (simd/isa_*.h); each
// ISA's row file instantiates row_kernels_of<V>() compiled with its own flags.
//   to_f16: kLanes values per vector; the tail, and any kLanes values holding a NaN, go to the
//   reference (VCVTPS2PH keeps a NaN's payload, the reference writes the one quiet NaN 0x7e00).
//   sum_squares: 8 values per step into V::SumSquares8's 8 double partial sums.
#pragma once

#include "backend/cpu/row_kernels.h"

namespace sinter::cpu::simd {
namespace {

template <class V>
void to_f16(const float* in, void* out, int64_t n) {
  const QuantizeRowFn reference = dtype_traits(DType::F16).quantize;
  auto* o = static_cast<uint8_t*>(out);
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const typename V::F v = V::load(in + i);
    if (V::any_nan(v)) {
      reference(in + i, o + 2 * i, V::kLanes);
      continue;
    }
    V::store_f16(o + 2 * i, v);
  }
  reference(in + i, o + 2 * i, n - i);
}

template <class V>
double sum_squares(const float* x, int64_t n) {
  typename V::SumSquares8 partial;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) partial.add(x + i);
  double s[8];
  partial.store(s);
  return combine_sum_squares(s, x, i, n);
}

template <class V>
RowKernels row_kernels_of() {
  return RowKernels{to_f16<V>, sum_squares<V>};
}

}  // namespace
}  // namespace sinter::cpu::simd
