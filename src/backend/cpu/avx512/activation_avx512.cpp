// AVX-512 activation functions: simd/activation_impl.h over the AVX-512 traits, 16 values per
// vector.
#include "backend/cpu/simd/activation_impl.h"
#include "backend/cpu/simd/isa_avx512.h"

namespace sinter::cpu {

ActivationKernels activation_kernels_avx512() { return simd::activation_kernels<simd::Avx512>(); }

}  // namespace sinter::cpu
