// AVX2 (F16C) row kernels: simd/row_ops_impl.h over the AVX2 traits, 8 values per vector.
#include "backend/cpu/simd/isa_avx2.h"
#include "backend/cpu/simd/row_ops_impl.h"

namespace sinter::cpu {

RowKernels row_kernels_avx2() { return simd::row_kernels_of<simd::Avx2>(); }

}  // namespace sinter::cpu
