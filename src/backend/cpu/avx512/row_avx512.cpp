// AVX-512 row kernels: simd/row_ops_impl.h over the AVX-512 traits, 16 values per vector.
#include "backend/cpu/simd/isa_avx512.h"
#include "backend/cpu/simd/row_ops_impl.h"

namespace sinter::cpu {

RowKernels row_kernels_avx512() { return simd::row_kernels_of<simd::Avx512>(); }

}  // namespace sinter::cpu
