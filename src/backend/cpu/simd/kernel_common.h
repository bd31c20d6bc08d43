// ISA-independent helpers of the packed gemm and quantize kernels (the per-ISA commons
// avx2/avx2_common.h and avx512/avx512_common.h include them): internal linkage, like everything
// compiled with ISA flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "backend/cpu/kernels.h"
#include "backend/cpu/simd/intrinsics.h"

namespace sinter::cpu::simd {
namespace {

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Generation streams weights from memory faster with software prefetches ahead of the bytes
// being read (docs/KERNELS.md "Prefetch"): F32/F16/BF16 rows and the AVX2 block records 2 KB
// ahead. (The AVX-512 block kernels prefetch 8 KB ahead, avx512_common.h; with the AVX2 kernels,
// 2 KB and 8 KB measured alike: Q4_0 tg 30.4 / 30.0 t/s, medians of 3 paired runs.)
constexpr size_t kPrefetchDistance = 2048;
// Into L1 (T0) by default; _MM_HINT_T1 asks into L2 only. The hint is an int: GCC's _MM_HINT_*
// are enumerators of its own `_mm_hint`, clang's are plain ints.
template <int Hint = _MM_HINT_T0>
inline void prefetch_lines(const uint8_t* p, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(p + o), static_cast<decltype(_MM_HINT_T0)>(Hint));
  }
}

// One activation column in the planar layout.
struct Column {
  const int8_t* q;
  const float* d;
  const int32_t* sums;  // or, for Q8_1, float s
  Column() = default;
  Column(const uint8_t* base, const ColumnLayout& layout)
      : q(reinterpret_cast<const int8_t*>(base)),
        d(reinterpret_cast<const float*>(base + layout.scale_offset)),
        sums(reinterpret_cast<const int32_t*>(base + layout.sum_offset)) {}
};

// Runs tile<N>(first column) over all columns: N at a time, then the remainder.
template <int N, class Tile>
void over_columns(int64_t columns, Tile&& tile) {
  int64_t c = 0;
  for (; c + N <= columns; c += N) tile.template operator()<N>(c);
  const int64_t rest = columns - c;
  if constexpr (N > 1) {
    if (rest > 0) {
      [&]<int... I>(std::integer_sequence<int, I...>) {
        ((rest == I + 1 ? (tile.template operator()<I + 1>(c), 0) : 0), ...);
      }
      (std::make_integer_sequence<int, N - 1>{});
    }
  }
}

}  // namespace
}  // namespace sinter::cpu::simd
