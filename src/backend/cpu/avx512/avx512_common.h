// Helpers shared by the AVX-512 kernel files. Everything here has internal linkage (anonymous
// namespace), so code compiled with AVX-512 flags can never be picked by the linker for a caller
// in a generic file. Include only from files under src/backend/cpu/avx512/.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

#include "backend/cpu/isa_kernels.h"
#include "backend/cpu/simd/isa_avx512.h"
#include "backend/cpu/simd/kernel_common.h"

namespace sinter::cpu::avx512 {

namespace {

using simd::Column;
using simd::kPrefetchDistance;
using simd::min64;
using simd::over_columns;
using simd::prefetch_lines;

inline __m512i broadcast_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// 16 F16 values (one per row lane) widened.
inline __m512 load_f16x16(const uint8_t* p) { return simd::Avx512::load_f16(p); }

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
constexpr size_t kRecordPrefetchDistance = 8192;
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

// Writes 16 row results (fewer in a group padded past n_out).
inline void store_rows(float* out, __m512 v, int lanes) { simd::Avx512::store_lanes(out, v, lanes); }

}  // namespace
}  // namespace sinter::cpu::avx512
