// AVX2 activation rounding into the planar layout: simd/quantize_impl.h over the AVX2 traits.
#include "backend/cpu/isa_kernels.h"
#include "backend/cpu/simd/isa_avx2.h"
#include "backend/cpu/simd/quantize_impl.h"

namespace sinter::cpu::avx2 {

void quantize_column(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                     uint8_t* column) {
  simd::quantize_column_of<simd::Avx2>(x, format, layout, column);
}

}  // namespace sinter::cpu::avx2
