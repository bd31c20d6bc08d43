// AVX2 gated delta-rule kernel: simd/delta_net_impl.h over the AVX2 traits, blocks of up to 4
// vectors (32 value lanes): a block's two sums and d take 8 of the 16 registers with the
// broadcasts beside them.
#include "backend/cpu/simd/delta_net_impl.h"
#include "backend/cpu/simd/isa_avx2.h"

namespace sinter::cpu {

DeltaNetKernels delta_net_kernels_avx2() { return simd::delta_net_kernels<simd::Avx2, 4>(); }

}  // namespace sinter::cpu
