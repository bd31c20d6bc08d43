// AVX-512 activation rounding into the planar layout: simd/quantize_impl.h over the AVX-512
// traits.
#include "backend/cpu/isa_kernels.h"
#include "backend/cpu/simd/isa_avx512.h"
#include "backend/cpu/simd/quantize_impl.h"

namespace sinter::cpu::avx512 {

void quantize_column(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                     uint8_t* column) {
  simd::quantize_column_of<simd::Avx512>(x, format, layout, column);
}

}  // namespace sinter::cpu::avx512
