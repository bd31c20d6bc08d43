// The recurrent kernels (recurrent_kernels.h) written once over an ISA's vector traits V
// (simd/isa_*.h; simd/isa_scalar.h for the generic level). A lane is one channel of the
// convolution; each lane computes its outputs with the scalar definition's operations in its
// order, so the width changes no bit.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/recurrent_kernels.h"

namespace sinter::cpu::simd {
namespace {

// `count` values (1 .. kLanes) at p in the first lanes, zeros in the others; and the store of
// the first `count` lanes.
template <class V>
typename V::F load_part(const float* p, int64_t count) {
  return count >= V::kLanes ? V::load(p) : V::load(p, V::tail_mask(count));
}
template <class V>
void store_part(float* p, int64_t count, typename V::F v) {
  if (count >= V::kLanes) {
    V::store(p, v);
  } else {
    V::store(p, V::tail_mask(count), v);
  }
}

// Causal convolution over channels [begin, end), kConvBlock vectors of kLanes channels at a
// time (their fma chains, one per token, overlap in the processor): the channels' weights and
// each slot's window in lane order, the window a ring whose oldest value is at `oldest`; per
// token y = fma chain over the window, oldest first, then x; x then replaces the oldest value.
template <class V>
void ssm_conv(const SsmConvArgs& a, const SlotRuns& runs, int64_t begin, int64_t end, float* scratch) {
  constexpr int L = V::kLanes;
  const int64_t k = a.k, taps = k - 1;
  float* weights = scratch;                       // [kConvBlock][k][L]: weight[j, channel]
  float* windows = scratch + kConvBlock * k * L;  // [kConvBlock][k - 1][L]
  for (int64_t c0 = begin; c0 < end; c0 += kConvBlock * L) {
    const int count = static_cast<int>(std::min<int64_t>(kConvBlock, (end - c0 + L - 1) / L));
    int lanes[kConvBlock];
    for (int b = 0; b < count; ++b) {
      const int64_t first = c0 + b * L;
      lanes[b] = static_cast<int>(std::min<int64_t>(L, end - first));
      for (int64_t j = 0; j < k; ++j) {
        for (int l = 0; l < L; ++l)
          weights[(b * k + j) * L + l] = l < lanes[b] ? a.weight[(first + l) * k + j] : 0.0f;
      }
    }
    for (int64_t r = 0; r < runs.count; ++r) {
      // Channel c's taps at state[(c − c0)·taps ..].
      float* state = a.state + (runs.slot[r] * a.channels + c0) * taps;
      for (int b = 0; b < count; ++b) {
        for (int64_t j = 0; j < taps; ++j) {
          for (int l = 0; l < L; ++l)
            windows[(b * taps + j) * L + l] = l < lanes[b] ? state[(b * L + l) * taps + j] : 0.0f;
        }
      }
      int64_t oldest = 0;
      for (int32_t i = runs.begin[r]; i < runs.begin[r + 1]; ++i) {
        const int64_t t = runs.tokens[i];
        for (int b = 0; b < count; ++b) {
          const float* w = weights + b * k * L;
          float* window = windows + b * taps * L;
          const typename V::F x = load_part<V>(a.x + t * a.x_stride + c0 + b * L, lanes[b]);
          typename V::F sum = V::zero();
          for (int64_t j = 0, at = oldest; j < taps; ++j, at = at + 1 == taps ? 0 : at + 1)
            sum = V::fma(V::load(w + j * L), V::load(window + at * L), sum);
          sum = V::fma(V::load(w + taps * L), x, sum);
          store_part<V>(a.y + t * a.channels + c0 + b * L, lanes[b], sum);
          V::store(window + oldest * L, x);
        }
        oldest = oldest + 1 == taps ? 0 : oldest + 1;
      }
      for (int b = 0; b < count; ++b) {
        for (int64_t j = 0, at = oldest; j < taps; ++j, at = at + 1 == taps ? 0 : at + 1) {
          for (int l = 0; l < lanes[b]; ++l) state[(b * L + l) * taps + j] = windows[(b * taps + at) * L + l];
        }
      }
    }
  }
}

template <class V>
RecurrentKernels recurrent_kernels() {
  return {V::kLanes, ssm_conv<V>};
}

}  // namespace
}  // namespace sinter::cpu::simd
