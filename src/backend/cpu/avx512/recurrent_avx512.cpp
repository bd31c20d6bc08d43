// AVX-512 recurrent kernels: simd/recurrent_impl.h over the AVX-512 traits, 16 channels or state
// rows per vector.
#include "backend/cpu/simd/isa_avx512.h"
#include "backend/cpu/simd/recurrent_impl.h"

namespace sinter::cpu {

RecurrentKernels recurrent_kernels_avx512() { return simd::recurrent_kernels<simd::Avx512>(); }

}  // namespace sinter::cpu
