// AVX2 activation functions: simd/activation_impl.h over the AVX2 traits, 8 values per vector.
#include "backend/cpu/simd/activation_impl.h"
#include "backend/cpu/simd/isa_avx2.h"

namespace sinter::cpu {

ActivationKernels activation_kernels_avx2() { return simd::activation_kernels<simd::Avx2>(); }

}  // namespace sinter::cpu
