// Reading tensors of any type as F32 through their strides, and writing F32 rows as a type: the
// conversions every reference op is built on (each type's reference dequantizer and quantizer,
// src/tensor/dtype.h).
#include <cassert>
#include <cstring>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {

void read_row_f32(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, float* out) {
  const DTypeTraits& traits = dtype_traits(t.type);
  assert(traits.dequantize != nullptr);
  const uint8_t* row = t.row(i1, i2, i3);
  const int64_t n = t.ne[0];
  if (traits.block_size > 1 || t.nb[0] == traits.block_bytes) {
    // Blocks (or plain values) stored back to back: the whole row at once.
    traits.dequantize(row, out, n);
    return;
  }
  // A strided row of a plain type (a permuted view): one value at a time.
  for (int64_t i = 0; i < n; ++i) traits.dequantize(row + i * static_cast<int64_t>(t.nb[0]), out + i, 1);
}

void read_flat_f32(const Tensor& t, int64_t first, int64_t count, float* out) {
  const DTypeTraits& traits = dtype_traits(t.type);
  assert(traits.dequantize != nullptr && traits.block_size == 1);
  for (int64_t e = first; e < first + count; ++e) {
    // The logical coordinates of element e, innermost dimension first.
    const int64_t i0 = e % t.ne[0];
    const int64_t i1 = (e / t.ne[0]) % t.ne[1];
    const int64_t i2 = (e / (t.ne[0] * t.ne[1])) % t.ne[2];
    const int64_t i3 = e / (t.ne[0] * t.ne[1] * t.ne[2]);
    traits.dequantize(t.row(i1, i2, i3) + i0 * static_cast<int64_t>(t.nb[0]), out + (e - first), 1);
  }
}

void write_row(DType type, const float* values, void* dst, int64_t n) {
  const DTypeTraits& traits = dtype_traits(type);
  assert(traits.quantize != nullptr && n % traits.block_size == 0);
  traits.quantize(values, dst, n);
}

void keep_state_snapshot(const Tensor& state, int64_t planes, const Tensor& slots, int64_t t, int64_t slot) {
  const int32_t* snapshots = state_snapshots(slots);
  if (snapshots == nullptr || snapshots[t] < 0) return;
  assert(snapshots[t] < planes && slot < planes);
  const auto plane = static_cast<size_t>(state.elements() / planes) * sizeof(float);
  auto* bytes = static_cast<uint8_t*>(state.data);
  std::memcpy(bytes + static_cast<size_t>(snapshots[t]) * plane, bytes + static_cast<size_t>(slot) * plane,
              plane);
}

}  // namespace sinter::reference_backend
