// The recurrent kernels (recurrent_kernels.h) written once over an ISA's vector traits V
// (simd/isa_*.h; simd/isa_scalar.h for the generic level). A lane is one channel of the
// convolution or one state row of the scan; each lane computes its outputs with the scalar
// definition's operations in its order, so the width changes no bit.
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

// rows[0 .. lanes) of n values each into lane order: out[j·stride + l] = rows[l][j], 0 in the
// lanes from `lanes` on. A block of kLanes values of every row is loaded and transposed.
template <class V>
void to_lanes(const float* const* rows, int lanes, int64_t n, float* out, int64_t stride) {
  typename V::F block[V::kLanes];
  int64_t j0 = 0;
  if (lanes == V::kLanes) {
    for (; j0 + V::kLanes <= n; j0 += V::kLanes) {
#pragma GCC unroll 16
      for (int l = 0; l < V::kLanes; ++l) block[l] = V::load(rows[l] + j0);
      V::transpose(block);
#pragma GCC unroll 16
      for (int j = 0; j < V::kLanes; ++j) V::store(out + (j0 + j) * stride, block[j]);
    }
  }
  for (; j0 < n; j0 += V::kLanes) {
    const int64_t count = std::min<int64_t>(V::kLanes, n - j0);
    for (int l = 0; l < V::kLanes; ++l) block[l] = l < lanes ? load_part<V>(rows[l] + j0, count) : V::zero();
    V::transpose(block);
    for (int64_t j = 0; j < count; ++j) V::store(out + (j0 + j) * stride, block[j]);
  }
}

// The inverse, for the first `lanes` lanes: rows[l][j] = in[j·stride + l].
template <class V>
void from_lanes(const float* in, int64_t stride, int lanes, int64_t n, float* const* rows) {
  typename V::F block[V::kLanes];
  int64_t j0 = 0;
  if (lanes == V::kLanes) {
    for (; j0 + V::kLanes <= n; j0 += V::kLanes) {
#pragma GCC unroll 16
      for (int j = 0; j < V::kLanes; ++j) block[j] = V::load(in + (j0 + j) * stride);
      V::transpose(block);
#pragma GCC unroll 16
      for (int l = 0; l < V::kLanes; ++l) V::store(rows[l] + j0, block[l]);
    }
  }
  for (; j0 < n; j0 += V::kLanes) {
    const int64_t count = std::min<int64_t>(V::kLanes, n - j0);
    for (int j = 0; j < V::kLanes; ++j) block[j] = j < count ? V::load(in + (j0 + j) * stride) : V::zero();
    V::transpose(block);
    for (int l = 0; l < lanes; ++l) store_part<V>(rows[l] + j0, count, block[l]);
  }
}

// Causal convolution over channels [begin, end), kConvBlock vectors of kLanes channels at a
// time (their fma chains, one per token, overlap in the processor): the channels' weights and
// each slot's window in lane order, the window a ring whose oldest value is at `oldest`; per
// token y = fma chain over the window, oldest first, then x; x then replaces the oldest value.
template <class V>
void ssm_conv(const SsmConvArgs& a, const SlotRuns& runs, int64_t begin, int64_t end, float* scratch) {
  constexpr int64_t kLanes = V::kLanes;
  const int64_t k = a.k, taps = k - 1;
  float* weights = scratch;                            // [kConvBlock][k][kLanes]: weight[j, channel]
  float* windows = scratch + kConvBlock * k * kLanes;  // [kConvBlock][k - 1][kLanes]
  for (int64_t c0 = begin; c0 < end; c0 += kConvBlock * kLanes) {
    const int count = static_cast<int>(std::min<int64_t>(kConvBlock, (end - c0 + kLanes - 1) / kLanes));
    int lanes[kConvBlock];
    for (int b = 0; b < count; ++b) {
      const int64_t first = c0 + b * kLanes;
      lanes[b] = static_cast<int>(std::min<int64_t>(kLanes, end - first));
      for (int64_t j = 0; j < k; ++j) {
        for (int l = 0; l < kLanes; ++l)
          weights[(b * k + j) * kLanes + l] = l < lanes[b] ? a.weight[(first + l) * k + j] : 0.0f;
      }
    }
    for (int64_t r = 0; r < runs.count; ++r) {
      // Channel c's taps at state[(c − c0)·taps ..].
      float* state = a.state + (runs.slot[r] * a.channels + c0) * taps;
      for (int b = 0; b < count; ++b) {
        for (int64_t j = 0; j < taps; ++j) {
          for (int l = 0; l < kLanes; ++l)
            windows[(b * taps + j) * kLanes + l] = l < lanes[b] ? state[(b * kLanes + l) * taps + j] : 0.0f;
        }
      }
      int64_t oldest = 0;
      for (int32_t i = runs.begin[r]; i < runs.begin[r + 1]; ++i) {
        const int64_t t = runs.tokens[i];
        for (int b = 0; b < count; ++b) {
          const float* w = weights + b * k * kLanes;
          float* window = windows + b * taps * kLanes;
          const typename V::F x = load_part<V>(a.x + t * a.x_stride + c0 + b * kLanes, lanes[b]);
          typename V::F sum = V::zero();
          for (int64_t j = 0, at = oldest; j < taps; ++j, at = at + 1 == taps ? 0 : at + 1)
            sum = V::fma(V::load(w + j * kLanes), V::load(window + at * kLanes), sum);
          sum = V::fma(V::load(w + taps * kLanes), x, sum);
          store_part<V>(a.y + t * a.channels + c0 + b * kLanes, lanes[b], sum);
          V::store(window + oldest * kLanes, x);
        }
        oldest = oldest + 1 == taps ? 0 : oldest + 1;
      }
      for (int b = 0; b < count; ++b) {
        for (int64_t j = 0, at = oldest; j < taps; ++j, at = at + 1 == taps ? 0 : at + 1) {
          for (int l = 0; l < lanes[b]; ++l)
            state[(b * kLanes + l) * taps + j] = windows[(b * taps + at) * kLanes + l];
        }
      }
    }
  }
}

// A per-head value (softplus(dt), the decay) in each lane of a tile whose lane l is a row of head
// head[l]: one broadcast when the tile lies in one head, a load when each row is a head.
template <class V>
typename V::F per_head(const float* values, const int64_t* head, int lanes, int64_t head_dim, float* tmp) {
  if (head[0] == head[lanes - 1]) return V::set1(values[head[0]]);
  if (head_dim == 1) return load_part<V>(values + head[0], lanes);
  for (int l = 0; l < V::kLanes; ++l) tmp[l] = values[head[l]];
  return V::load(tmp);
}

// A tile: `lanes` consecutive state rows from r0 (recurrent_kernels.h); lane l is a row of head
// head[l] (lanes past the rows repeat the last head).
template <class V>
struct Tile {
  int64_t r0;
  int lanes;
  int64_t head[V::kLanes];
};

// A slot's only token in the batch (generation), for the tiles of a block, on the state rows
// where they lie: for each kLanes state values of each row, s = fma(B, x·dts, s·decay) along n
// (B and Mamba-1's A rows are contiguous in n), stored back; then the block of rows is
// transposed so that y's chains run in lanes as in scan_block. Each value gets the same
// operations; the rows are transposed once instead of into lane order and back.
template <class V, int kCount>
void scan_direct(const SsmScanArgs& a, const Tile<V>* tiles, int64_t group, int64_t slot, int64_t t,
                 float* tmp) {
  constexpr int64_t kLanes = V::kLanes;
  using F = typename V::F;
  const int64_t d_state = a.d_state, rows_per_slot = a.head_dim * a.n_head;
  const bool per_value = a.decay == nullptr;
  float* xdt = tmp;                    // [kCount][kLanes]: per row, x·dts
  float* dts = tmp + kCount * kLanes;  // [kCount][kLanes]: per row, its head's dts (Mamba-1) or decay
  for (int b = 0; b < kCount; ++b) {
    const Tile<V>& tile = tiles[b];
    const float* x = a.x + t * a.x_stride + tile.r0;
    for (int l = 0; l < tile.lanes; ++l) {
      const float head_dts = a.dts[t * a.n_head + tile.head[l]];
      xdt[b * kLanes + l] = x[l] * head_dts;
      dts[b * kLanes + l] = per_value ? head_dts : a.decay[t * a.n_head + tile.head[l]];
    }
  }
  const float* bn = a.b + t * a.b_stride + group * d_state;
  const float* cn = a.c + t * a.c_stride + group * d_state;
  F y[kCount];
  for (int b = 0; b < kCount; ++b) y[b] = V::zero();
  F block[kLanes];
  for (int64_t j0 = 0; j0 < d_state; j0 += kLanes) {
    const int64_t count = std::min<int64_t>(kLanes, d_state - j0);
    const F bv = load_part<V>(bn + j0, count);
#pragma GCC unroll 4
    for (int b = 0; b < kCount; ++b) {
      const Tile<V>& tile = tiles[b];
      float* rows = a.state + (slot * rows_per_slot + tile.r0) * d_state + j0;
      for (int l = 0; l < tile.lanes; ++l) {
        float* row = rows + l * d_state;
        F d = V::set1(dts[b * kLanes + l]);
        if (per_value) d = V::exp(V::mul(d, load_part<V>(a.a + tile.head[l] * d_state + j0, count)));
        const F v = V::fma(bv, V::set1(xdt[b * kLanes + l]), V::mul(load_part<V>(row, count), d));
        store_part<V>(row, count, v);
        block[l] = v;
      }
      for (int l = tile.lanes; l < kLanes; ++l) block[l] = V::zero();
      V::transpose(block);
      for (int64_t j = 0; j < count; ++j) y[b] = V::fma(block[j], V::broadcast(cn + j0 + j), y[b]);
    }
  }
  for (int b = 0; b < kCount; ++b) store_part<V>(a.y + t * rows_per_slot + tiles[b].r0, tiles[b].lanes, y[b]);
}

// The tiles of a block over every slot's tokens. Scratch: the tiles' states in lane order,
// [d_state][count][kLanes], and for Mamba-1 their A likewise. Per token and state value n, in
// increasing n: s = fma(B[n], x·dts, s·decay) with decay = e^(dts·A[n]) (Mamba-1) or the head's
// (Mamba-2); y = fma(s, C[n], y) from 0.
template <class V, int kCount>
void scan_block(const SsmScanArgs& a, const SlotRuns& runs, const Tile<V>* tiles, int64_t group,
                float* states, float* decays, float* tmp) {
  constexpr int64_t kLanes = V::kLanes;
  constexpr int64_t kStride = int64_t{kCount} * kLanes;
  using F = typename V::F;
  const int64_t d_state = a.d_state, rows_per_slot = a.head_dim * a.n_head;
  const bool per_value = a.decay == nullptr;
  bool a_in_lanes = false;
  float* rows[kCount][kLanes];
  for (int64_t r = 0; r < runs.count; ++r) {
    if (runs.begin[r + 1] - runs.begin[r] == 1) {
      scan_direct<V, kCount>(a, tiles, group, runs.slot[r], runs.tokens[runs.begin[r]], tmp);
      continue;
    }
    if (per_value && !a_in_lanes) {
      for (int b = 0; b < kCount; ++b) {
        const float* a_rows[kLanes];
        for (int l = 0; l < kLanes; ++l) a_rows[l] = a.a + tiles[b].head[l] * d_state;
        to_lanes<V>(a_rows, tiles[b].lanes, d_state, decays + b * kLanes, kStride);
      }
      a_in_lanes = true;
    }
    for (int b = 0; b < kCount; ++b) {
      for (int l = 0; l < kLanes; ++l) {
        const int64_t row = tiles[b].r0 + std::min(l, tiles[b].lanes - 1);
        rows[b][l] = a.state + (runs.slot[r] * rows_per_slot + row) * d_state;
      }
      to_lanes<V>(rows[b], tiles[b].lanes, d_state, states + b * kLanes, kStride);
    }
    for (int32_t i = runs.begin[r]; i < runs.begin[r + 1]; ++i) {
      const int64_t t = runs.tokens[i];
      F dts[kCount], xdt[kCount], decay[kCount], y[kCount];
      for (int b = 0; b < kCount; ++b) {
        const Tile<V>& tile = tiles[b];
        dts[b] = per_head<V>(a.dts + t * a.n_head, tile.head, tile.lanes, a.head_dim, tmp);
        xdt[b] = V::mul(load_part<V>(a.x + t * a.x_stride + tile.r0, tile.lanes), dts[b]);
        decay[b] = per_value ? V::zero()
                             : per_head<V>(a.decay + t * a.n_head, tile.head, tile.lanes, a.head_dim, tmp);
        y[b] = V::zero();
      }
      const float* bn = a.b + t * a.b_stride + group * d_state;
      const float* cn = a.c + t * a.c_stride + group * d_state;
      float* s = states;
      if (per_value) {
        const float* an = decays;
        for (int64_t n = 0; n < d_state; ++n, s += kStride, an += kStride) {
          const F bv = V::broadcast(bn + n), cv = V::broadcast(cn + n);
#pragma GCC unroll 4
          for (int b = 0; b < kCount; ++b) {
            const F d = V::exp(V::mul(dts[b], V::load(an + b * kLanes)));
            const F v = V::fma(bv, xdt[b], V::mul(V::load(s + b * kLanes), d));
            V::store(s + b * kLanes, v);
            y[b] = V::fma(v, cv, y[b]);
          }
        }
      } else {
        for (int64_t n = 0; n < d_state; ++n, s += kStride) {
          const F bv = V::broadcast(bn + n), cv = V::broadcast(cn + n);
#pragma GCC unroll 4
          for (int b = 0; b < kCount; ++b) {
            const F v = V::fma(bv, xdt[b], V::mul(V::load(s + b * kLanes), decay[b]));
            V::store(s + b * kLanes, v);
            y[b] = V::fma(v, cv, y[b]);
          }
        }
      }
      for (int b = 0; b < kCount; ++b)
        store_part<V>(a.y + t * rows_per_slot + tiles[b].r0, tiles[b].lanes, y[b]);
    }
    for (int b = 0; b < kCount; ++b)
      from_lanes<V>(states + b * kLanes, kStride, tiles[b].lanes, d_state, rows[b]);
  }
}

// Selective scan over tiles [begin, end) (recurrent_kernels.h), in blocks of up to
// kScanTileBlock consecutive tiles of one group: each tile's output is a chain of d_state
// dependent fma (its lanes' sums in increasing n), and the chains of several tiles overlap in the
// processor where one alone would wait on each fma's latency.
template <class V>
void ssm_scan(const SsmScanArgs& a, const SlotRuns& runs, int64_t begin, int64_t end, float* scratch) {
  constexpr int64_t kLanes = V::kLanes;
  const int64_t d_state = a.d_state;
  const int64_t rows_per_group = a.head_dim * a.n_head / a.n_group;
  const int64_t tiles_per_group = ssm_scan_tiles_per_group(a, kLanes);
  float* states = scratch;                                     // [d_state][kScanTileBlock][kLanes]
  float* decays = states + d_state * kScanTileBlock * kLanes;  // the same: Mamba-1's A
  float* tmp = decays + d_state * kScanTileBlock * kLanes;     // [2][kScanTileBlock][kLanes]
  for (int64_t first = begin; first < end;) {
    const int64_t group = first / tiles_per_group;
    const auto count = static_cast<int>(
        std::min<int64_t>({kScanTileBlock, end - first, (group + 1) * tiles_per_group - first}));
    Tile<V> tiles[kScanTileBlock];
    for (int b = 0; b < count; ++b) {
      Tile<V>& tile = tiles[b];
      tile.r0 = group * rows_per_group + (first + b - group * tiles_per_group) * kLanes;
      tile.lanes = static_cast<int>(std::min<int64_t>(kLanes, (group + 1) * rows_per_group - tile.r0));
      for (int l = 0; l < kLanes; ++l) tile.head[l] = (tile.r0 + std::min(l, tile.lanes - 1)) / a.head_dim;
    }
    switch (count) {
      case 4: scan_block<V, 4>(a, runs, tiles, group, states, decays, tmp); break;
      case 3: scan_block<V, 3>(a, runs, tiles, group, states, decays, tmp); break;
      case 2: scan_block<V, 2>(a, runs, tiles, group, states, decays, tmp); break;
      default: scan_block<V, 1>(a, runs, tiles, group, states, decays, tmp); break;
    }
    first += count;
  }
}

template <class V>
RecurrentKernels recurrent_kernels() {
  return {V::kLanes, ssm_conv<V>, ssm_scan<V>};
}

}  // namespace
}  // namespace sinter::cpu::simd
