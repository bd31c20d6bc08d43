// AVX2 recurrent kernels: simd/recurrent_impl.h over the AVX2 traits, 8 channels or state rows
// per vector.
#include "backend/cpu/simd/isa_avx2.h"
#include "backend/cpu/simd/recurrent_impl.h"

namespace sinter::cpu {

RecurrentKernels recurrent_kernels_avx2() { return simd::recurrent_kernels<simd::Avx2>(); }

}  // namespace sinter::cpu
