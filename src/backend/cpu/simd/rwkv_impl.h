// The WKV kernels (rwkv_kernels.h) written once over an ISA's vector traits V (simd/isa_*.h).
// Vectors run across the value index: a block of up to B vectors of value lanes is held in
// registers while the loop walks the key index, so each lane does exactly the scalar
// reference's operations in its order (one fma chain per sum, keys in order) and the results
// are the reference's bits. The last vector of the last block is masked when n is no multiple
// of the lane count (masked lanes load zeros and are never stored).
#pragma once

#include "backend/cpu/rwkv_kernels.h"
#include "backend/cpu/simd/lane_blocks.h"

namespace sinter::cpu::simd {
namespace {

// RWKV-6 over the value lanes of a block, token by token (columns of values are independent):
//   kv = v[j]·k[i];  y[j] = fma(fma(kv, u[i], S[i][j]), r[i], y[j]);  S[i][j] = fma(S[i][j], w[i], kv).
template <class V, int kMaxBlock>
void wkv6_run(const Wkv6Run& run) {
  using F = typename V::F;
  const int64_t n = run.n;
  for_each_block<V, kMaxBlock>(n, [&]<int B, bool kTail>(int64_t j0, BlockLanes<V, B, kTail> lanes) {
    for (int64_t t = 0; t < run.count; ++t) {
      const int64_t o = t * run.stride;
      const float* k = run.k + o;
      const float* r = run.r + o;
      const float* w = run.w + o;
      F v[B], y[B];
#pragma GCC unroll 4
      for (int q = 0; q < B; ++q) {
        v[q] = lanes.load(run.v + o + j0, q);
        y[q] = V::zero();
      }
      float* row = run.state + j0;
      for (int64_t i = 0; i < n; ++i, row += n) {
        const F k_i = V::broadcast(k + i), r_i = V::broadcast(r + i);
        const F u_i = V::broadcast(run.u + i), w_i = V::broadcast(w + i);
#pragma GCC unroll 4
        for (int q = 0; q < B; ++q) {
          const F s = lanes.load(row, q);
          const F kv = V::mul(v[q], k_i);
          y[q] = V::fma(V::fma(kv, u_i, s), r_i, y[q]);
          lanes.store(row, q, V::fma(s, w_i, kv));
        }
      }
#pragma GCC unroll 4
      for (int q = 0; q < B; ++q) lanes.store(run.y + o + j0, q, y[q]);
    }
  });
}

// One RWKV-7 token over the value rows of a block (the state's column j holds key j of every
// value row): S[i][j] = fma(sa[i], b[j], fma(S[i][j], w[j], v[i]·k[j])); y[i] = fma(S[i][j], r[j],
// y[i]). With a_next, also the next token's sa[i] = fma(a_next[j], S[i][j], sa[i]) over the state
// as it is written: the same chain a pass of its own would sum.
template <class V, int B, bool kTail, bool kNext>
void wkv7_token(const Wkv7Run& run, int64_t i0, BlockLanes<V, B, kTail> lanes, int64_t o,
                typename V::F (&sa)[B]) {
  using F = typename V::F;
  const int64_t n = run.n;
  const float* w = run.w + o;
  const float* k = run.k + o;
  const float* b = run.b + o;
  const float* r = run.r + o;
  const float* a_next = kNext ? run.a + o + run.stride : nullptr;
  F v[B], y[B], sa_next[B];
#pragma GCC unroll 4
  for (int q = 0; q < B; ++q) {
    v[q] = lanes.load(run.v + o + i0, q);
    y[q] = V::zero();
    sa_next[q] = V::zero();
  }
  float* column = run.state + i0;
  for (int64_t j = 0; j < n; ++j, column += n) {
    const F w_j = V::broadcast(w + j), k_j = V::broadcast(k + j);
    const F b_j = V::broadcast(b + j), r_j = V::broadcast(r + j);
#pragma GCC unroll 4
    for (int q = 0; q < B; ++q) {
      const F s = V::fma(sa[q], b_j, V::fma(lanes.load(column, q), w_j, V::mul(v[q], k_j)));
      lanes.store(column, q, s);
      y[q] = V::fma(s, r_j, y[q]);
      if constexpr (kNext) sa_next[q] = V::fma(V::broadcast(a_next + j), s, sa_next[q]);
    }
  }
#pragma GCC unroll 4
  for (int q = 0; q < B; ++q) {
    lanes.store(run.y + o + i0, q, y[q]);
    if constexpr (kNext) sa[q] = sa_next[q];
  }
}

// The first token's sa[i] = Σ_j a[j]·S[i][j] for every value row, in a pass over the state with up
// to 8 vectors of rows at once (a head of 64 on AVX2: 8 independent fma chains keep both FMA pipes
// busy, where a block's 4 would wait on their latency, and a generation step has no other work to
// overlap). Parked in the token's output row, which each block reads before writing y there.
template <class V>
void wkv7_first_sa(const Wkv7Run& run) {
  using F = typename V::F;
  const int64_t n = run.n;
  for_each_block<V, 8>(n, [&]<int B, bool kTail>(int64_t i0, BlockLanes<V, B, kTail> lanes) {
    F sa[B];
#pragma GCC unroll 8
    for (int q = 0; q < B; ++q) sa[q] = V::zero();
    const float* column = run.state + i0;
    for (int64_t j = 0; j < n; ++j, column += n) {
      const F a_j = V::broadcast(run.a + j);
#pragma GCC unroll 8
      for (int q = 0; q < B; ++q) sa[q] = V::fma(a_j, lanes.load(column, q), sa[q]);
    }
#pragma GCC unroll 8
    for (int q = 0; q < B; ++q) lanes.store(run.y + i0, q, sa[q]);
  });
}

// RWKV-7 over blocks of value rows (rows are independent): each later token's sa is summed while
// its predecessor writes the state.
template <class V, int kMaxBlock>
void wkv7_run(const Wkv7Run& run) {
  using F = typename V::F;
  if (run.count == 0) return;
  wkv7_first_sa<V>(run);
  for_each_block<V, kMaxBlock>(run.n, [&]<int B, bool kTail>(int64_t i0, BlockLanes<V, B, kTail> lanes) {
    F sa[B];
#pragma GCC unroll 4
    for (int q = 0; q < B; ++q) sa[q] = lanes.load(run.y + i0, q);
    for (int64_t t = 0; t + 1 < run.count; ++t)
      wkv7_token<V, B, kTail, true>(run, i0, lanes, t * run.stride, sa);
    wkv7_token<V, B, kTail, false>(run, i0, lanes, (run.count - 1) * run.stride, sa);
  });
}

template <class V, int kMaxBlock6, int kMaxBlock7>
RwkvKernels rwkv_kernels() {
  return {wkv6_run<V, kMaxBlock6>, wkv7_run<V, kMaxBlock7>};
}

}  // namespace
}  // namespace sinter::cpu::simd
