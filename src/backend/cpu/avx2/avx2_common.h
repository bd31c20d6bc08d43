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

#include "backend/cpu/isa_kernels.h"
#include "backend/cpu/simd/isa_avx2.h"
#include "backend/cpu/simd/kernel_common.h"

namespace sinter::cpu::avx2 {
namespace {

using simd::Column;
using simd::kPrefetchDistance;
using simd::min64;
using simd::over_columns;
using simd::prefetch_lines;

inline __m256i broadcast_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

inline __m256i load256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// 8 F16 values (one per row lane) widened.
inline __m256 load_f16x8(const uint8_t* p) { return simd::Avx2::load_f16(p); }
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

// Writes 8 row results (fewer at the end of a padded group).
inline void store_rows(float* out, __m256 v, int lanes) { simd::Avx2::store_lanes(out, v, lanes); }

}  // namespace
}  // namespace sinter::cpu::avx2
