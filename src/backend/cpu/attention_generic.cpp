// The generic attention inner loop (the reference the SIMD versions are tested against), and the
// run-time choice of version.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_loop.h"
#include "backend/cpu/isa_dispatch.h"
#include "core/half.h"

namespace sinter::cpu {
namespace {

void widen(DType type, const uint8_t* row, float* out, int64_t n) {
  switch (type) {
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) out[i] = load_f16(row + 2 * i);
      break;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        bf16_bits h;
        std::memcpy(&h, row + 2 * i, 2);
        out[i] = bf16_to_f32(h);
      }
      break;
    default: std::memcpy(out, row, static_cast<size_t>(n) * sizeof(float)); break;
  }
}

}  // namespace

size_t attention_scratch_floats(int64_t slots, int64_t head_dim, int64_t head_dim_v) {
  // one block of widened rows (and 16 floats of padding); per (token, head) slot: maximum, weight
  // total and the block's scores
  return static_cast<size_t>(kCellBlock * std::max(head_dim, head_dim_v) + 16 + (2 + kCellBlock) * slots);
}

namespace {

struct GenericOps {
  static void widen(DType type, const uint8_t* row, float* out, int64_t n) {
    sinter::cpu::widen(type, row, out, n);
  }
  static void dots(const float* q, const float* rows, int64_t count, int64_t n, float* out) {
    for (int64_t j = 0; j < count; ++j) {
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i) sum += q[i] * rows[j * n + i];
      out[j] = sum;
    }
  }
  static float exp_shifted(float* x, float shift, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
    return sum;
  }
  static void scale(float* x, float factor, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] *= factor;
  }
  static float scale_max(float* x, float factor, int64_t n) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i] *= factor);
    return m;
  }
  static void accumulate(float* out, const float* rows, const float* weights, int64_t count, int64_t n) {
    for (int64_t j = 0; j < count; ++j) {
      for (int64_t i = 0; i < n; ++i) out[i] += rows[j * n + i] * weights[j];
    }
  }
};

}  // namespace

void attend_group_generic(const AttentionGroupArgs& a) { attend_group_loop<GenericOps>(a); }

AttendGroupFn attend_group_for(IsaLevel level) {
  return version_for<AttendGroupFn>(level, attend_group_generic, attend_group_avx2, attend_group_avx512);
}

AttendGroupFn attend_group_kernel() {
  static const AttendGroupFn chosen =
      best_version<AttendGroupFn>(attend_group_generic, attend_group_avx2, attend_group_avx512);
  return chosen;
}

}  // namespace sinter::cpu
