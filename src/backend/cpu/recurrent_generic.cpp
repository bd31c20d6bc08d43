// The generic recurrent kernels (simd/recurrent_impl.h over one-lane traits: the scalar
// definition, with std::exp), the scratch they need, and the run-time choice of version.
#include "backend/cpu/isa_dispatch.h"
#include "backend/cpu/recurrent_kernels.h"
#include "backend/cpu/simd/isa_scalar.h"
#include "backend/cpu/simd/recurrent_impl.h"

namespace sinter::cpu {

size_t ssm_conv_kernel_floats(int64_t k) {
  return static_cast<size_t>((2 * k - 1) * kConvBlock) * kMaxRecurrentLanes;
}

size_t ssm_scan_kernel_floats(int64_t d_state) {
  return static_cast<size_t>(2 * (d_state + 1) * kScanTileBlock) * kMaxRecurrentLanes;
}

int64_t ssm_scan_tiles_per_group(const SsmScanArgs& args, int lanes) {
  const int64_t rows_per_group = args.head_dim * args.n_head / args.n_group;
  return (rows_per_group + lanes - 1) / lanes;
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
