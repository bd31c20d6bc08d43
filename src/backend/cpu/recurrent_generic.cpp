// The generic recurrent kernels (simd/recurrent_impl.h over one-lane traits: the scalar
// definition), the scratch they need, and the run-time choice of version.
#include "backend/cpu/isa_dispatch.h"
#include "backend/cpu/recurrent_kernels.h"
#include "backend/cpu/simd/isa_scalar.h"
#include "backend/cpu/simd/recurrent_impl.h"

namespace sinter::cpu {

size_t ssm_conv_kernel_floats(int64_t k) {
  return static_cast<size_t>((2 * k - 1) * kConvBlock) * kMaxRecurrentLanes;
}

RecurrentKernels recurrent_kernels_generic() { return simd::recurrent_kernels<simd::Scalar>(); }

RecurrentKernels recurrent_kernels_for(IsaLevel level) {
  return version_for<RecurrentKernels>(level, recurrent_kernels_generic(), recurrent_kernels_avx2,
                                       recurrent_kernels_avx512);
}

const RecurrentKernels& recurrent_kernels() {
  static const RecurrentKernels chosen = best_version<RecurrentKernels>(
      recurrent_kernels_generic(), recurrent_kernels_avx2, recurrent_kernels_avx512);
  return chosen;
}

}  // namespace sinter::cpu
