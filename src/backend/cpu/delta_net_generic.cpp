// The generic gated delta-rule kernel (simd/delta_net_impl.h over one-lane traits: the scalar
// definition, with std::fma) and the run-time choice of version.
#include "backend/cpu/delta_net_kernels.h"
#include "backend/cpu/isa_dispatch.h"
#include "backend/cpu/simd/delta_net_impl.h"
#include "backend/cpu/simd/isa_scalar.h"

namespace sinter::cpu {

// Blocks of 16 single lanes: 16 chains a compiler may keep in registers.
DeltaNetKernels delta_net_kernels_generic() { return simd::delta_net_kernels<simd::Scalar, 16>(); }

DeltaNetKernels delta_net_kernels_for(IsaLevel level) {
  return version_for<DeltaNetKernels>(level, delta_net_kernels_generic(), delta_net_kernels_avx2,
                                      delta_net_kernels_avx512);
}

const DeltaNetKernels& delta_net_kernels() {
  static const DeltaNetKernels chosen = best_version<DeltaNetKernels>(
      delta_net_kernels_generic(), delta_net_kernels_avx2, delta_net_kernels_avx512);
  return chosen;
}

}  // namespace sinter::cpu
