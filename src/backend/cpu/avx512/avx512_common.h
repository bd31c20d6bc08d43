// Helpers shared by the AVX-512 kernel files. Everything here has internal linkage (anonymous
// namespace), so code compiled with AVX-512 flags can never be picked by the linker for a caller
// in a generic file. Include only from files under src/backend/cpu/avx512/.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "backend/cpu/avx512/avx512_kernels.h"

namespace sinter::cpu::avx512 {

namespace {

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

inline __m512i broadcast_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// 16 F16 values (one per row lane) widened.
inline __m512 load_f16x16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

inline __m512i load_u8x16_as_i32(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m512i load_i8x16_as_i32(const uint8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Generation streams weights from memory faster with software prefetches ahead of the row or
// record being read (measured: +15-30 % gemv bandwidth per core over the hardware prefetchers).
// F32/F16/BF16 rows: 2 KB ahead. The 32-value block records (Q4_0 ... Q8_0): 8 KB ahead, which
// with two cores sharing the memory bus gave Q4_0 generation +6 % over 2 KB (paired runs of
// `sinter bench` on the 1.1 B model, 4 rounds) and left Q8_0 unchanged; the 4-bit kernels
// consume bytes twice as fast per instruction, so 2 KB ahead left too little time for a miss.
constexpr size_t kPrefetchDistance = 2048;
constexpr size_t kRecordPrefetchDistance = 8192;
// Into L1 (T0) by default; _MM_HINT_T1 asks into L2 only (see kL2PrefetchDistance). The hint is
// an int: GCC's _MM_HINT_* are enumerators of its own `_mm_hint`, clang's are plain ints.
template <int Hint = _MM_HINT_T0>
inline void prefetch_lines(const uint8_t* p, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(p + o), static_cast<decltype(_MM_HINT_T0)>(Hint));
  }
}

// Step `step` of `Steps` of a prefetch of the `Bytes` at p spread over a record's work: its share
// of whole cache lines. Issued all at once at the start of a record, a K-quant super-block's
// 21-53 lines filled the core's L1 miss buffers and stalled the loads of the record being
// computed (docs/KERNELS.md "Prefetch").
// The same share kL2PrefetchDistance further on is asked into L2 only (T1): a T0 prefetch holds
// one of the core's ~16 L1 miss buffers until its line arrives, which caps one core near 10 GB/s
// at this memory's latency; requests into L2 queue elsewhere, and the near T0 request then finds
// its line in L2.
constexpr size_t kL2PrefetchDistance = 8192;
template <size_t Bytes, int Steps>
inline void prefetch_step(const uint8_t* p, int step) {
  constexpr size_t kLines = (Bytes + 63) / 64;
  for (size_t l = kLines * step / Steps; l < kLines * (step + 1) / Steps; ++l) {
    _mm_prefetch(reinterpret_cast<const char*>(p + 64 * l), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + kL2PrefetchDistance + 64 * l), _MM_HINT_T1);
  }
}

// One activation column in the planar layout.
struct Column {
  const int8_t* q;
  const float* d;
  const int32_t* sums;  // or, for Q8_1, float s
  Column(const uint8_t* base, const ColumnLayout& layout)
      : q(reinterpret_cast<const int8_t*>(base)),
        d(reinterpret_cast<const float*>(base + layout.scale_offset)),
        sums(reinterpret_cast<const int32_t*>(base + layout.sum_offset)) {}
};

// Writes 16 row results (fewer in a group padded past n_out).
inline void store_rows(float* out, __m512 v, int lanes) {
  if (lanes == kGroupRows) {
    _mm512_storeu_ps(out, v);
  } else {
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << lanes) - 1), v);
  }
}

// Runs tile<N>(group, first column, ...) over all columns: N at a time, then the remainder.
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
}  // namespace sinter::cpu::avx512
