// AVX-512 gated delta-rule kernel: simd/delta_net_impl.h over the AVX-512 traits, blocks of up to
// 4 vectors (64 value lanes: a head of 128 in two blocks).
#include "backend/cpu/simd/delta_net_impl.h"
#include "backend/cpu/simd/isa_avx512.h"

namespace sinter::cpu {

DeltaNetKernels delta_net_kernels_avx512() { return simd::delta_net_kernels<simd::Avx512, 4>(); }

}  // namespace sinter::cpu
