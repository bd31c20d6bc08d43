// Plain number types: F32, F16, BF16, F64 and the integer types.
#include <cstring>

#include "core/half.h"
#include "tensor/reference.h"

namespace sinter::reference {

// memcpy from or to null is undefined even for zero bytes; empty rows may come with null pointers.
void dequantize_row_f32(const void* blocks, float* out, int64_t count) {
  if (count <= 0) return;
  std::memcpy(out, blocks, static_cast<size_t>(count) * sizeof(float));
}
void quantize_row_f32(const float* values, void* blocks, int64_t count) {
  if (count <= 0) return;
  std::memcpy(blocks, values, static_cast<size_t>(count) * sizeof(float));
}

void dequantize_row_f16(const void* blocks, float* out, int64_t count) {
  const auto* in = static_cast<const uint8_t*>(blocks);
  for (int64_t i = 0; i < count; ++i) out[i] = load_f16(in + 2 * i);
}
void quantize_row_f16(const float* values, void* blocks, int64_t count) {
  auto* out = static_cast<uint8_t*>(blocks);
  for (int64_t i = 0; i < count; ++i) {
    const f16_bits h = f32_to_f16(values[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}

void dequantize_row_bf16(const void* blocks, float* out, int64_t count) {
  const auto* in = static_cast<const uint8_t*>(blocks);
  for (int64_t i = 0; i < count; ++i) {
    bf16_bits h;
    std::memcpy(&h, in + 2 * i, 2);
    out[i] = bf16_to_f32(h);
  }
}
void quantize_row_bf16(const float* values, void* blocks, int64_t count) {
  auto* out = static_cast<uint8_t*>(blocks);
  for (int64_t i = 0; i < count; ++i) {
    const bf16_bits h = f32_to_bf16(values[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}

namespace {
template <class T>
void widen_row(const void* blocks, float* out, int64_t count) {
  const auto* in = static_cast<const uint8_t*>(blocks);
  for (int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, in + sizeof(T) * i, sizeof(T));
    out[i] = static_cast<float>(value);
  }
}
}  // namespace

void dequantize_row_f64(const void* blocks, float* out, int64_t count) {
  widen_row<double>(blocks, out, count);
}
void dequantize_row_i8(const void* blocks, float* out, int64_t count) {
  widen_row<int8_t>(blocks, out, count);
}
void dequantize_row_i16(const void* blocks, float* out, int64_t count) {
  widen_row<int16_t>(blocks, out, count);
}
void dequantize_row_i32(const void* blocks, float* out, int64_t count) {
  widen_row<int32_t>(blocks, out, count);
}
void dequantize_row_i64(const void* blocks, float* out, int64_t count) {
  widen_row<int64_t>(blocks, out, count);
}

}  // namespace sinter::reference
