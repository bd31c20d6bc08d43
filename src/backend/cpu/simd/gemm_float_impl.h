// Products of F32, F16 and BF16 weights (packed [k][16 rows]) with F32 columns (F16 and BF16
// columns hold the rounded, widened values), written once over an ISA's vector traits V
// (simd/isa_*.h) and a tiling policy T; each ISA's gemm_float file instantiates them. A group of
// 16 rows is kHalves = 16 / kLanes vectors (AVX2: two halves of 8 rows, AVX-512: one vector).
// One fma chain per row and column in k order: the reference's reduction (products of two F16 or
// two BF16 values are exact in float), whatever the tile.
//
// The tiling policy T:
//   kGenerationGroups     groups per tile for one column (generation streams weights: 4 groups
//                         give 4·kHalves independent fma chains)
//   kPromptGroups         groups per tile for several columns (prompts reuse each weight load)
//   prompt_columns(G)     columns per tile of G groups (> 1 column)
//   kPrefetchPrompts      whether prompt tiles prefetch rows too (generation tiles always do)
//   kOutOfLine            whether tiles are kept out of line (see tile_out_of_line)
#pragma once

#include "backend/cpu/simd/kernel_common.h"

namespace sinter::cpu::simd {
namespace {

// How one k's 16 weights are stored: kBytes per k, half h of them kBytes·h / kHalves on.
template <class V>
struct F32Rows {
  static constexpr size_t kBytes = 64;
  static typename V::F load(const uint8_t* p) { return V::load(reinterpret_cast<const float*>(p)); }
};
template <class V>
struct F16Rows {
  static constexpr size_t kBytes = 32;
  static typename V::F load(const uint8_t* p) { return V::load_f16(p); }
};
template <class V>
struct BF16Rows {
  static constexpr size_t kBytes = 32;
  static typename V::F load(const uint8_t* p) { return V::load_bf16(p); }
};

// G groups (16·G rows) × N columns, over k in order: G·N·kHalves accumulators. Each group's
// weights are loaded where the first column uses them, then reused by the others.
template <class V, class Rows, int G, int N, bool Prefetch>
void tile(const uint8_t* const* groups, int64_t n_in, const float* const* x, float* const* out,
          const int* lanes, int64_t dst_stride) {
  using F = typename V::F;
  constexpr int kHalves = kGroupRows / V::kLanes;
  F acc[G][N][kHalves];
#pragma GCC unroll 16
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 16
    for (int c = 0; c < N; ++c) {
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) acc[g][c][h] = V::zero();
    }
  }
  for (int64_t k = 0; k < n_in; ++k) {
    F w[G][kHalves];
#pragma GCC unroll 16
    for (int c = 0; c < N; ++c) {
      const F xk = V::broadcast(x[c] + k);
#pragma GCC unroll 16
      for (int g = 0; g < G; ++g) {
        if (c == 0) {
          const uint8_t* p = groups[g] + static_cast<size_t>(k) * Rows::kBytes;
          if (Prefetch && k % (64 / Rows::kBytes) == 0) prefetch_lines(p + kPrefetchDistance, 64);
#pragma GCC unroll 2
          for (int h = 0; h < kHalves; ++h) w[g][h] = Rows::load(p + h * (Rows::kBytes / kHalves));
        }
#pragma GCC unroll 2
        for (int h = 0; h < kHalves; ++h) acc[g][c][h] = V::fma(w[g][h], xk, acc[g][c][h]);
      }
    }
  }
#pragma GCC unroll 16
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 16
    for (int c = 0; c < N; ++c) {
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) {
        V::store_lanes(out[g] + c * dst_stride + h * V::kLanes, acc[g][c][h], lanes[g] - h * V::kLanes);
      }
    }
  }
}

// The same, kept out of line: inlined into the AVX2 callers, gcc hoisted their tail masks (and
// more) into registers across the k loop and stored accumulators or a weight register to the
// stack on every k (half the FMA peak).
template <class V, class Rows, int G, int N, bool Prefetch>
[[gnu::noinline]] void tile_out_of_line(const uint8_t* const* groups, int64_t n_in, const float* const* x,
                                        float* const* out, const int* lanes, int64_t dst_stride) {
  tile<V, Rows, G, N, Prefetch>(groups, n_in, x, out, lanes, dst_stride);
}

// G groups from g0 by all the columns, `Columns` at a time.
template <class V, class T, class Rows, int G, int Columns>
void groups_tile(const PackedMatrix& w, int64_t g0, const uint8_t* columns, const ColumnLayout& layout,
                 int64_t column_count, float* dst, int64_t dst_stride) {
  const uint8_t* groups[G];
  float* out[G];
  int lanes[G];
  for (int g = 0; g < G; ++g) {
    groups[g] = w.data + static_cast<size_t>(g0 + g) * w.group_bytes;
    out[g] = dst + (g0 + g) * kGroupRows;
    lanes[g] = static_cast<int>(min64(kGroupRows, w.n_out - (g0 + g) * kGroupRows));
  }
  over_columns<Columns>(column_count, [&]<int N>(int64_t c) {
    const float* x[N];
    for (int i = 0; i < N; ++i)
      x[i] = reinterpret_cast<const float*>(columns + static_cast<size_t>(c + i) * layout.bytes);
    float* o[G];
    for (int g = 0; g < G; ++g) o[g] = out[g] + c * dst_stride;
    constexpr bool kPrefetch = Columns == 1 || T::kPrefetchPrompts;
    if constexpr (T::kOutOfLine) {
      tile_out_of_line<V, Rows, G, N, kPrefetch>(groups, w.n_in, x, o, lanes, dst_stride);
    } else {
      tile<V, Rows, G, N, kPrefetch>(groups, w.n_in, x, o, lanes, dst_stride);
    }
  });
}

template <class V, class T, class Rows>
void gemm_float(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
                const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride) {
  int64_t g = group_begin;
  if (column_count == 1) {
    constexpr int G = T::kGenerationGroups;
    for (; g + G <= group_end; g += G)
      groups_tile<V, T, Rows, G, 1>(w, g, columns, layout, 1, dst, dst_stride);
    for (; g < group_end; ++g) groups_tile<V, T, Rows, 1, 1>(w, g, columns, layout, 1, dst, dst_stride);
    return;
  }
  constexpr int G = T::kPromptGroups;
  for (; g + G <= group_end; g += G) {
    groups_tile<V, T, Rows, G, T::prompt_columns(G)>(w, g, columns, layout, column_count, dst, dst_stride);
  }
  if constexpr (G > 1) {
    for (; g < group_end; ++g) {
      groups_tile<V, T, Rows, 1, T::prompt_columns(1)>(w, g, columns, layout, column_count, dst, dst_stride);
    }
  }
}

}  // namespace
}  // namespace sinter::cpu::simd
