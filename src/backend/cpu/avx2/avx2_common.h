// Helpers shared by the AVX2 kernel files. Everything here has internal linkage (anonymous
// namespace), so code compiled with AVX2 flags can never be picked by the linker for a caller in
// a generic file. Include only from files under src/backend/cpu/avx2/.
//
// The AVX2 kernels read the same 16-row packed groups as the AVX-512 ones, as two halves of 8
// rows (one 256-bit register holds 8 row lanes). Without VNNI, integer dot products are
// VPMADDUBSW (unsigned × signed bytes → pairs summed in int16, saturating) and VPMADDWD with
// ones (→ int32): each kernel sums only as many int16 pairs as cannot overflow, so the block sums
// stay exact.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "backend/cpu/avx2/avx2_kernels.h"

namespace sinter::cpu::avx2 {
namespace {

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

inline __m256i broadcast_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

inline __m256i load256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// 8 F16 values (one per row lane) widened.
inline __m256 load_f16x8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i load_u8x8_as_i32(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(v));
}
inline __m256i load_i8x8_as_i32(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(v));
}

// int16 pairs → int32 lanes.
inline __m256i widen_pairs(__m256i pairs) { return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)); }

// A row's scale (int32 lanes holding values that fit int16) in both int16 halves of its lane, so
// that VPMADDWD(pairs, as_pair_scale(s)) = widen_pairs(pairs)·s exactly, without a VPMULLD.
inline __m256i as_pair_scale(__m256i scale) {
  return _mm256_blend_epi16(scale, _mm256_slli_epi32(scale, 16), 0xaa);
}

// Generation streams weights from memory faster with software prefetches ~2 KB ahead of the
// record being read. (The AVX-512 block kernels prefetch 8 KB ahead; with the AVX2 kernels,
// 2 KB and 8 KB measured alike: Q4_0 tg 30.4 / 30.0 t/s, medians of 3 paired runs.)
constexpr size_t kPrefetchDistance = 2048;
inline void prefetch_lines(const uint8_t* p, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(reinterpret_cast<const char*>(p + o), _MM_HINT_T0);
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

// Writes 8 row results (fewer at the end of a padded group).
inline void store_rows(float* out, __m256 v, int lanes) {
  if (lanes >= 8) {
    _mm256_storeu_ps(out, v);
  } else if (lanes > 0) {
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), index), v);
  }
}

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
}  // namespace sinter::cpu::avx2
