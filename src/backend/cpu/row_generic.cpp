// The generic row kernels (the reference the SIMD versions are tested against), and the run-time
// choice of version.
#include "backend/cpu/isa_dispatch.h"
#include "backend/cpu/row_kernels.h"

namespace sinter::cpu {

double sum_squares_generic(const float* x, int64_t n) {
  double s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += static_cast<double>(x[i + j] * x[i + j]);
  }
  return combine_sum_squares(s, x, i, n);
}

namespace {
RowKernels generic() { return RowKernels{dtype_traits(DType::F16).quantize, sum_squares_generic}; }
}  // namespace

RowKernels row_kernels_for(IsaLevel level) {
  return version_for<RowKernels>(level, generic(), row_kernels_avx2, row_kernels_avx512);
}

const RowKernels& row_kernels() {
  static const RowKernels chosen = best_version<RowKernels>(generic(), row_kernels_avx2, row_kernels_avx512);
  return chosen;
}

QuantizeRowFn row_writer(DType type) {
  return type == DType::F16 ? row_kernels().to_f16 : dtype_traits(type).quantize;
}

}  // namespace sinter::cpu
