// The generic attention inner loop (the reference the SIMD versions are tested against), and the
// run-time choice of version.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_loop.h"
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

size_t attention_scratch_floats(int64_t heads, int64_t head_dim, int64_t head_dim_v) {
  // one widened row (and 16 floats of padding), and per head: maximum and weight total
  return static_cast<size_t>(std::max(head_dim, head_dim_v) + 16 + 2 * heads);
}

namespace {

struct GenericOps {
  static void widen(DType type, const uint8_t* row, float* out, int64_t n) { sinter::cpu::widen(type, row, out, n); }
  static float dot(const float* a, const float* b, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
    return sum;
  }
  static void update(float* sum, const float* row, float rescale, float weight, int64_t n) {
    for (int64_t i = 0; i < n; ++i) sum[i] = sum[i] * rescale + row[i] * weight;
  }
};

}  // namespace

void attend_group_generic(const AttentionGroupArgs& a) { attend_group_loop<GenericOps>(a); }

AttendGroupFn attend_group_for(IsaLevel level) {
  switch (level) {
    case IsaLevel::kAvx512: return attend_group_avx512();
    case IsaLevel::kAvx2: return attend_group_avx2();
    case IsaLevel::kGeneric: return attend_group_generic;
  }
  return attend_group_generic;
}

AttendGroupFn attend_group_kernel() {
  static const AttendGroupFn chosen = [] {
    for (int level = static_cast<int>(selected_isa_level()); level >= 0; --level) {
      if (AttendGroupFn fn = attend_group_for(static_cast<IsaLevel>(level))) return fn;
    }
    return &attend_group_generic;
  }();
  return chosen;
}

}  // namespace sinter::cpu
