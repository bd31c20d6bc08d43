// The attention inner loop, written once over an ISA's vector operations. Each ISA file
// (generic, AVX2, AVX-512) includes this header and instantiates it with its own `Ops`, compiled
// with its own instruction-set flags:
//
//   struct Ops {
//     static void widen(DType type, const uint8_t* row, float* out, int64_t n);  // cache row -> F32
//     static float dot(const float* a, const float* b, int64_t n);
//     static void update(float* sum, const float* row, float rescale, float weight, int64_t n);
//   };                                                   // sum = sum * rescale + row * weight
//
// Per head, for every visible cell in order: s = scale·(q·k), soft-capped when asked; when s is a
// new maximum the running sum is rescaled by exp(old max − s) and the cell gets weight 1,
// otherwise weight exp(s − max); the weight total follows the same updates. At the end the sum
// is divided by the total.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_kernels.h"

namespace sinter::cpu {

template <class Ops>
void attend_group_loop(const AttentionGroupArgs& a) {
  float* row = a.scratch;
  float* max_score = row + std::max(a.head_dim, a.head_dim_v) + 16;
  float* total = max_score + a.heads;
  for (int32_t h = 0; h < a.heads; ++h) {
    max_score[h] = -INFINITY;
    total[h] = 0.0f;
    std::memset(a.out + h * a.head_dim_v, 0, static_cast<size_t>(a.head_dim_v) * sizeof(float));
  }
  float scores[kMaxGroupHeads];
  for (int32_t j = 0; j < a.cell_count; ++j) {
    const int64_t cell = a.cells[j];
    if (j + 1 < a.cell_count) {  // the next rows are scattered: ask for them early
      __builtin_prefetch(a.keys + a.cells[j + 1] * a.key_stride);
      __builtin_prefetch(a.values + a.cells[j + 1] * a.value_stride);
    }
    Ops::widen(a.cache_type, a.keys + cell * a.key_stride, row, a.head_dim);
    for (int32_t h = 0; h < a.heads; ++h) {
      float s = Ops::dot(a.queries + h * a.head_dim, row, a.head_dim) * a.scale;
      if (a.softcap != 0.0f) s = a.softcap * std::tanh(s / a.softcap);
      scores[h] = s;
    }
    Ops::widen(a.cache_type, a.values + cell * a.value_stride, row, a.head_dim_v);
    for (int32_t h = 0; h < a.heads; ++h) {
      float rescale = 1.0f, weight = 1.0f;
      if (scores[h] > max_score[h]) {
        rescale = std::exp(max_score[h] - scores[h]);
        max_score[h] = scores[h];
      } else {
        weight = std::exp(scores[h] - max_score[h]);
      }
      Ops::update(a.out + h * a.head_dim_v, row, rescale, weight, a.head_dim_v);
      total[h] = total[h] * rescale + weight;
    }
  }
  for (int32_t h = 0; h < a.heads; ++h) {
    const float inverse = total[h] == 0.0f ? 0.0f : 1.0f / total[h];
    Ops::update(a.out + h * a.head_dim_v, a.out + h * a.head_dim_v, inverse, 0.0f, a.head_dim_v);
  }
}

}  // namespace sinter::cpu
