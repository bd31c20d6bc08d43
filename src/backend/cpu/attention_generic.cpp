// The generic attention inner loop (the reference the SIMD versions are tested against), and the
// run-time choice of version.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_kernels.h"
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
  // one widened row, and per head: maximum and weight total (2 floats)
  return static_cast<size_t>(std::max(head_dim, head_dim_v) + 2 * heads + 16);
}

void attend_group_generic(const AttentionGroupArgs& a) {
  float* row = a.scratch;
  float* max_score = row + std::max(a.head_dim, a.head_dim_v);
  float* total = max_score + a.heads;
  for (int32_t h = 0; h < a.heads; ++h) {
    max_score[h] = -INFINITY;
    total[h] = 0.0f;
    std::memset(a.out + h * a.head_dim_v, 0, static_cast<size_t>(a.head_dim_v) * sizeof(float));
  }
  float scores[kMaxGroupHeads];  // per head of the group (groups are at most 64 heads)
  for (int32_t j = 0; j < a.cell_count; ++j) {
    const int64_t cell = a.cells[j];
    widen(a.cache_type, a.keys + cell * a.key_stride, row, a.head_dim);
    for (int32_t h = 0; h < a.heads; ++h) {
      const float* q = a.queries + h * a.head_dim;
      float dot = 0.0f;
      for (int64_t i = 0; i < a.head_dim; ++i) dot += q[i] * row[i];
      float s = dot * a.scale;
      if (a.softcap != 0.0f) s = a.softcap * std::tanh(s / a.softcap);
      scores[h] = s;
    }
    widen(a.cache_type, a.values + cell * a.value_stride, row, a.head_dim_v);
    for (int32_t h = 0; h < a.heads; ++h) {
      float* sum = a.out + h * a.head_dim_v;
      float rescale = 1.0f, weight = 1.0f;
      if (scores[h] > max_score[h]) {
        rescale = std::exp(max_score[h] - scores[h]);
        max_score[h] = scores[h];
        for (int64_t i = 0; i < a.head_dim_v; ++i) sum[i] *= rescale;
      } else {
        weight = std::exp(scores[h] - max_score[h]);
      }
      for (int64_t i = 0; i < a.head_dim_v; ++i) sum[i] += row[i] * weight;
      total[h] = total[h] * rescale + weight;
    }
  }
  for (int32_t h = 0; h < a.heads; ++h) {
    const float inverse = total[h] == 0.0f ? 0.0f : 1.0f / total[h];
    float* sum = a.out + h * a.head_dim_v;
    for (int64_t i = 0; i < a.head_dim_v; ++i) sum[i] *= inverse;
  }
}

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
