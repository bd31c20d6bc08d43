// The gated delta-rule kernel (delta_net_kernels.h) written once over an ISA's vector traits V
// (simd/isa_*.h, the one-lane simd/isa_scalar.h for the generic level). Columns of values are
// independent (graph.h): a block of up to B vectors of value lanes is held in registers while the
// loops walk the key index, so each lane does exactly the reference's operations in its order
// (one fma chain per sum, keys in order) and the results are the reference's bits. A block runs
// every token of the run before the next block starts: its columns of the state (d_k rows of B
// vectors, 32 KiB for a head of 128 in blocks of 64 lanes) stay in the L1 cache from token to
// token. Each token reads them twice: once for Sᵀk (read only), once to decay, write and read out.
#pragma once

#include <cmath>

#include "backend/cpu/delta_net_kernels.h"
#include "backend/cpu/simd/lane_blocks.h"

namespace sinter::cpu::simd {
namespace {

// kPerKeyGate (Kimi's KDA): key row i decays by its own e_i, applied to the state where it is
// read, S·e_i (one rounding), for Sᵀk and again for the write; then d = (v − Sᵀk)·beta.
template <class V, int kMaxBlock, bool kPerKeyGate>
void delta_net_run_gated(const DeltaNetRun& run) {
  using F = typename V::F;
  const int64_t d_k = run.d_k, d_v = run.d_v;
  float decays[kPerKeyGate ? kMaxDeltaNetKeys : 1];
  for_each_block<V, kMaxBlock>(d_v, [&]<int B, bool kTail>(int64_t j0, BlockLanes<V, B, kTail> lanes) {
    for (int64_t t = 0; t < run.count; ++t) {
      const float* q = run.q + t * run.q_stride;
      const float* k = run.k + t * run.k_stride;
      const float* v = run.v + t * run.v_stride + j0;
      const float* g = run.g + t * run.g_stride;
      float decay = 0.0f;
      if constexpr (kPerKeyGate) {
        for (int64_t i = 0; i < d_k; ++i) decays[i] = std::exp(g[i]);
      } else {
        decay = std::exp(g[0]);
      }
      const F e = V::set1(decay), minus_e = V::set1(-decay);
      const F beta = V::set1(run.beta[t * run.beta_stride]);
      // Sᵀk over the state as it was (decayed by key with a per-key gate): one chain per value
      // lane, keys in order.
      F sum[B];
#pragma GCC unroll 4
      for (int c = 0; c < B; ++c) sum[c] = V::zero();
      const float* row = run.state + j0;
      for (int64_t i = 0; i < d_k; ++i, row += d_v) {
        const F k_i = V::broadcast(k + i);
        if constexpr (kPerKeyGate) {
          const F e_i = V::broadcast(decays + i);
#pragma GCC unroll 4
          for (int c = 0; c < B; ++c) sum[c] = V::fma(V::mul(lanes.load(row, c), e_i), k_i, sum[c]);
        } else {
#pragma GCC unroll 4
          for (int c = 0; c < B; ++c) sum[c] = V::fma(lanes.load(row, c), k_i, sum[c]);
        }
      }
      // d = fma(−e, Sᵀk, v)·beta (an fma, not a product and a difference that a compiler may fuse
      // or not), or (v − Sᵀk)·beta with a per-key gate; then the decayed state plus k ⊗ d, read
      // out by q as it is written.
      F d[B];
#pragma GCC unroll 4
      for (int c = 0; c < B; ++c) {
        if constexpr (kPerKeyGate) {
          d[c] = V::mul(V::sub(lanes.load(v, c), sum[c]), beta);
        } else {
          d[c] = V::mul(V::fma(minus_e, sum[c], lanes.load(v, c)), beta);
        }
        sum[c] = V::zero();
      }
      float* state_row = run.state + j0;
      for (int64_t i = 0; i < d_k; ++i, state_row += d_v) {
        const F k_i = V::broadcast(k + i), q_i = V::broadcast(q + i);
        F e_i = e;
        if constexpr (kPerKeyGate) e_i = V::broadcast(decays + i);
#pragma GCC unroll 4
        for (int c = 0; c < B; ++c) {
          const F s = V::fma(k_i, d[c], V::mul(lanes.load(state_row, c), e_i));
          lanes.store(state_row, c, s);
          sum[c] = V::fma(s, q_i, sum[c]);
        }
      }
      const F scale = V::set1(run.scale);
      float* y = run.y + t * run.y_stride + j0;
#pragma GCC unroll 4
      for (int c = 0; c < B; ++c) lanes.store(y, c, V::mul(sum[c], scale));
    }
  });
}

template <class V, int kMaxBlock>
void delta_net_run(const DeltaNetRun& run) {
  if (run.per_key_gate) {
    delta_net_run_gated<V, kMaxBlock, true>(run);
  } else {
    delta_net_run_gated<V, kMaxBlock, false>(run);
  }
}

template <class V, int kMaxBlock>
DeltaNetKernels delta_net_kernels() {
  return {delta_net_run<V, kMaxBlock>};
}

}  // namespace
}  // namespace sinter::cpu::simd
