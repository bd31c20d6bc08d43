// The loops of activation rounding into the planar layout (kernels.h), written once over an
// ISA's block operations. Each ISA's quantize file includes this header and calls
// quantize_column_loop with its own functions, compiled with its own instruction-set flags
// (everything here has internal linkage):
//   Block32     int32_t (const float* x, int8_t* q, float* d_rounded, float* d_exact):
//               one Q8_0/Q8_1 block of 32 values, q, d rounded to F16 and d exact; returns Σq
//   Q8K         void (const float* x, const ActivationFormat&, const ColumnLayout&, uint8_t* column)
//   RoundF16, RoundBF16   void (const float* x, int64_t n, float* out): to F16 / BF16 and back
//   F16RoundTrip          float (float)
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels.h"

namespace sinter::cpu {
namespace {

// Q8_0/Q8_1: q and d per block of 32, then per block what the weight kernels want beside them:
// Q8_0 Σq·sum_scale (where its format asks for sums), Q8_1 s = Σq·d (d exact) rounded to F16.
template <auto Block32, auto F16RoundTrip>
void quantize_blocks32(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                       uint8_t* column) {
  auto* q = reinterpret_cast<int8_t*>(column);
  auto* d = reinterpret_cast<float*>(column + layout.scale_offset);
  uint8_t* sums = column + layout.sum_offset;
  for (int64_t b = 0; b < layout.n / 32; ++b) {
    float exact;
    const int32_t sum = Block32(x + 32 * b, q + 32 * b, &d[b], &exact);
    if (format.format == DType::Q8_1) {
      reinterpret_cast<float*>(sums)[b] = F16RoundTrip(static_cast<float>(sum) * exact);
    } else if (format.sum_group == 32) {
      reinterpret_cast<int32_t*>(sums)[b] = sum * format.sum_scale;
    }
  }
}

template <auto Block32, auto Q8K, auto RoundF16, auto RoundBF16, auto F16RoundTrip>
void quantize_column_loop(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                          uint8_t* column) {
  switch (format.format) {
    case DType::Q8_0:
    case DType::Q8_1: quantize_blocks32<Block32, F16RoundTrip>(x, format, layout, column); break;
    case DType::Q8_K: Q8K(x, format, layout, column); break;
    case DType::F16: RoundF16(x, layout.n, reinterpret_cast<float*>(column)); break;
    case DType::BF16: RoundBF16(x, layout.n, reinterpret_cast<float*>(column)); break;
    default:
      if (layout.n > 0) std::memcpy(column, x, static_cast<size_t>(layout.n) * sizeof(float));
      break;
  }
}

}  // namespace
}  // namespace sinter::cpu
