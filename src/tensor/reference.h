// Scalar reference dequantize/quantize functions, one pair per type: the specification.
// `count` is always a multiple of the type's block size.
#pragma once

#include <cstdint>

namespace sinter::reference {

#define SINTER_DECLARE_DEQUANTIZE(type) \
  void dequantize_row_##type(const void* blocks, float* out, int64_t count);
#define SINTER_DECLARE_QUANTIZE(type) \
  void quantize_row_##type(const float* values, void* blocks, int64_t count);

// Plain number types (quant_plain.cpp).
SINTER_DECLARE_DEQUANTIZE(f32)
SINTER_DECLARE_QUANTIZE(f32)
SINTER_DECLARE_DEQUANTIZE(f16)
SINTER_DECLARE_QUANTIZE(f16)
SINTER_DECLARE_DEQUANTIZE(bf16)
SINTER_DECLARE_QUANTIZE(bf16)
SINTER_DECLARE_DEQUANTIZE(f64)
SINTER_DECLARE_DEQUANTIZE(i8)
SINTER_DECLARE_DEQUANTIZE(i16)
SINTER_DECLARE_DEQUANTIZE(i32)
SINTER_DECLARE_DEQUANTIZE(i64)

// 32-value blocks (quant_legacy.cpp).
SINTER_DECLARE_DEQUANTIZE(q4_0)
SINTER_DECLARE_QUANTIZE(q4_0)
SINTER_DECLARE_DEQUANTIZE(q8_0)
SINTER_DECLARE_QUANTIZE(q8_0)

#undef SINTER_DECLARE_DEQUANTIZE
#undef SINTER_DECLARE_QUANTIZE

}  // namespace sinter::reference
