// The generic ISA level: activations rounded by the reference quantizers of src/tensor and
// written in the planar layout of kernels.h. (Products at this level run the reference dot
// products on the file's rows: see op_matmul.cpp.) This is the specification the vectorized
// quantizers are tested against.
#include <cstring>

#include "backend/cpu/kernels.h"
#include "tensor/blocks.h"
#include "tensor/reference.h"

namespace sinter::cpu {
namespace {

void store_sums(const int8_t* q, int64_t n, const ActivationFormat& format, int32_t* sums) {
  if (format.sum_group <= 0) return;
  for (int64_t g = 0; g < n / format.sum_group; ++g) {
    int32_t sum = 0;
    for (int l = 0; l < format.sum_group; ++l) sum += q[g * format.sum_group + l];
    sums[g] = sum * format.sum_scale;
  }
}

}  // namespace

void quantize_column_generic(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                             uint8_t* column) {
  const int64_t n = layout.n;
  auto* q = reinterpret_cast<int8_t*>(column);
  auto* d = reinterpret_cast<float*>(column + layout.scale_offset);
  switch (format.format) {
    case DType::Q8_0: {
      for (int64_t b = 0; b < n / kQK; ++b) {
        BlockQ8_0 block;
        reference::quantize_row_q8_0(x + b * kQK, &block, kQK);
        std::memcpy(q + b * kQK, block.qs, kQK);
        d[b] = f16_to_f32(block.d);
      }
      store_sums(q, n, format, reinterpret_cast<int32_t*>(column + layout.sum_offset));
      break;
    }
    case DType::Q8_1: {
      auto* s = reinterpret_cast<float*>(column + layout.sum_offset);
      for (int64_t b = 0; b < n / kQK; ++b) {
        BlockQ8_1 block;
        reference::quantize_row_q8_1(x + b * kQK, &block, kQK);
        std::memcpy(q + b * kQK, block.qs, kQK);
        d[b] = f16_to_f32(block.d);
        s[b] = f16_to_f32(block.s);
      }
      break;
    }
    case DType::Q8_K: {
      for (int64_t b = 0; b < n / kQKK; ++b) {
        BlockQ8_K block;
        reference::quantize_row_q8_k(x + b * kQKK, &block, kQKK);
        std::memcpy(q + b * kQKK, block.qs, kQKK);
        d[b] = block.d;
      }
      store_sums(q, n, format, reinterpret_cast<int32_t*>(column + layout.sum_offset));
      break;
    }
    case DType::F16: {
      auto* out = reinterpret_cast<float*>(column);
      for (int64_t k = 0; k < n; ++k) out[k] = f16_to_f32(f32_to_f16(x[k]));
      break;
    }
    case DType::BF16: {
      auto* out = reinterpret_cast<float*>(column);
      for (int64_t k = 0; k < n; ++k) out[k] = bf16_to_f32(f32_to_bf16(x[k]));
      break;
    }
    default:
      if (n > 0) std::memcpy(column, x, static_cast<size_t>(n) * sizeof(float));
      break;
  }
}

}  // namespace sinter::cpu
