// AVX2 products of the 32-value block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4)
// with Q8_0/Q8_1
// activation columns, on 16-row packed groups read as two halves of 8 rows (docs/KERNELS.md).
//
// Per block and row half: 8 registers of levels (register i: values 4i..4i+3 of each row);
// VPMADDUBSW with 4 broadcast activation bytes gives int16 pairs, summed while they cannot
// overflow, widened to int32 row lanes: the exact block integer sum of the reference. Then
// acc = fma(float(isum), d_w·d_x, acc), one chain per row and column.
#include "backend/cpu/avx2/block_tile_avx2.h"

namespace sinter::cpu::avx2 {
namespace {

// Unsigned nibble levels of slice registers (4 slices, low then high nibbles).
inline void nibble_levels(const uint8_t* slices, int half, __m256i* w) {
  const __m256i low = _mm256_set1_epi8(0x0f);
  for (int t = 0; t < 4; ++t) {
    const __m256i v = load256(slices + 64 * t + 32 * half);
    w[t] = _mm256_and_si256(v, low);
    w[4 + t] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  }
}

// The fifth bits: byte j of register i (values 4i + j) gets bit 4i + j of the row's qh.
inline void add_fifth_bits(const uint8_t* qh_lanes, int half, __m256i* w) {
  const __m256i qh = load256(qh_lanes + 32 * half);
  for (int byte = 0; byte < 4; ++byte) {
    const auto b = static_cast<char>(byte);
    const auto c4 = static_cast<char>(4 + byte), c8 = static_cast<char>(8 + byte),
               c12 = static_cast<char>(12 + byte);
    const __m256i spread = _mm256_shuffle_epi8(
        qh, _mm256_setr_epi8(b, b, b, b, c4, c4, c4, c4, c8, c8, c8, c8, c12, c12, c12, c12, b, b, b, b, c4,
                             c4, c4, c4, c8, c8, c8, c8, c12, c12, c12, c12));
    for (int h = 0; h < 2; ++h) {
      const int i = 2 * byte + h;
      const __m256i bits = _mm256_set1_epi32(static_cast<int32_t>(0x08040201u << (4 * h)));
      const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits);
      w[i] = _mm256_or_si256(w[i], _mm256_and_si256(set, _mm256_set1_epi8(16)));
    }
  }
}

// Σ over the 8 registers of maddubs(w, x) for levels ≤ 15: 8 pairs of ≤ 2·15·128 fit in int16.
inline __m256i dot_small(const __m256i* w, const int8_t* xq) {
  __m256i p = _mm256_maddubs_epi16(w[0], broadcast_i32(xq));
  for (int i = 1; i < 8; ++i) p = _mm256_add_epi16(p, _mm256_maddubs_epi16(w[i], broadcast_i32(xq + 4 * i)));
  return widen_pairs(p);
}

// Levels ≤ 31: four pairs at a time.
inline __m256i dot_five_bit(const __m256i* w, const int8_t* xq) {
  __m256i a = _mm256_maddubs_epi16(w[0], broadcast_i32(xq));
  __m256i b = _mm256_maddubs_epi16(w[4], broadcast_i32(xq + 16));
  for (int i = 1; i < 4; ++i) {
    a = _mm256_add_epi16(a, _mm256_maddubs_epi16(w[i], broadcast_i32(xq + 4 * i)));
    b = _mm256_add_epi16(b, _mm256_maddubs_epi16(w[4 + i], broadcast_i32(xq + 16 + 4 * i)));
  }
  return _mm256_add_epi32(widen_pairs(a), widen_pairs(b));
}

// Signed levels (−128..127) with activations in −127..127: |w| × (x with w's sign), each pair
// ≤ 2·128·127, widened one register at a time.
inline __m256i dot_signed(const __m256i* w, const int8_t* xq) {
  __m256i sum = _mm256_setzero_si256();
  for (int i = 0; i < 8; ++i) {
    const __m256i p =
        _mm256_maddubs_epi16(_mm256_abs_epi8(w[i]), _mm256_sign_epi8(broadcast_i32(xq + 4 * i), w[i]));
    sum = _mm256_add_epi32(sum, widen_pairs(p));
  }
  return sum;
}

struct Q4_0Kernel {
  static constexpr size_t kRecord = 288;
  static constexpr bool kMinimum = false;
  static void levels(const uint8_t* rec, int half, __m256i* w) { nibble_levels(rec + 32, half, w); }
  static __m256i isum(const __m256i* w, const int8_t* xq, int32_t offset_sum) {
    return _mm256_add_epi32(dot_small(w, xq), _mm256_set1_epi32(offset_sum));  // − 8·Σx
  }
};

struct Q4_1Kernel {
  static constexpr size_t kRecord = 320;
  static constexpr bool kMinimum = true;
  static void levels(const uint8_t* rec, int half, __m256i* w) { nibble_levels(rec + 64, half, w); }
  static __m256i isum(const __m256i* w, const int8_t* xq, int32_t) { return dot_small(w, xq); }
};

struct Q5_0Kernel {
  static constexpr size_t kRecord = 352;
  static constexpr bool kMinimum = false;
  static void levels(const uint8_t* rec, int half, __m256i* w) {
    nibble_levels(rec + 96, half, w);
    add_fifth_bits(rec + 32, half, w);
  }
  static __m256i isum(const __m256i* w, const int8_t* xq, int32_t offset_sum) {
    return _mm256_add_epi32(dot_five_bit(w, xq), _mm256_set1_epi32(offset_sum));  // − 16·Σx
  }
};

struct Q5_1Kernel {
  static constexpr size_t kRecord = 384;
  static constexpr bool kMinimum = true;
  static void levels(const uint8_t* rec, int half, __m256i* w) {
    nibble_levels(rec + 128, half, w);
    add_fifth_bits(rec + 64, half, w);
  }
  static __m256i isum(const __m256i* w, const int8_t* xq, int32_t) { return dot_five_bit(w, xq); }
};

// Q8_0 is stored as q + 128: flipping the top bit gives the signed q back. Its block sums are
// computed register by register over the columns (isums): the 8 registers of levels and their
// absolute values, held across 4 columns, needed more registers than there are (45 spill
// accesses per call).
struct Q8_0Kernel {
  static constexpr size_t kRecord = 544;
  static constexpr int kBothHalvesColumns = 4;  // see block_tile_avx2.h
  static __m256i level_register(const uint8_t* rec, int half, int i) {
    return _mm256_xor_si256(load256(rec + 32 + 64 * i + 32 * half), _mm256_set1_epi8(-128));
  }
  // isum[c] = the block's integer sum for column c (activation bytes xq[c]).
  template <int N>
  static void isums(const uint8_t* rec, int half, const int8_t* const* xq, __m256i* isum) {
    for (int c = 0; c < N; ++c) isum[c] = _mm256_setzero_si256();
    for (int i = 0; i < 8; ++i) {
      const __m256i w = level_register(rec, half, i);
      const __m256i magnitude = _mm256_abs_epi8(w);
      for (int c = 0; c < N; ++c) {
        const __m256i p = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(broadcast_i32(xq[c] + 4 * i), w));
        isum[c] = _mm256_add_epi32(isum[c], widen_pairs(p));
      }
    }
  }
};

struct IQ4_NLKernel {
  static constexpr size_t kRecord = 288;
  static constexpr bool kMinimum = false;
  static void levels(const uint8_t* rec, int half, __m256i* w) {
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
    nibble_levels(rec + 32, half, w);
    for (int i = 0; i < 8; ++i) w[i] = _mm256_shuffle_epi8(table, w[i]);
  }
  static __m256i isum(const __m256i* w, const int8_t* xq, int32_t) { return dot_signed(w, xq); }
};

// MXFP4: the doubled E2M1 values (−12..12) by table; the scales are F32 (kernels_pack.cpp).
struct MXFP4Kernel {
  static constexpr size_t kRecord = 320;
  static constexpr bool kMinimum = false;
  static constexpr bool kF32Scales = true;
  static void levels(const uint8_t* rec, int half, __m256i* w) {
    const __m256i table =
        _mm256_broadcastsi128_si256(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12));
    nibble_levels(rec + 64, half, w);
    for (int i = 0; i < 8; ++i) w[i] = _mm256_shuffle_epi8(table, w[i]);
  }
  static __m256i isum(const __m256i* w, const int8_t* xq, int32_t) { return dot_signed(w, xq); }
};

// The 8 rows' block scales of a record half: F16, or F32 where the kernel says so.
template <class Kernel>
__m256 block_scales(const uint8_t* rec, int half) {
  if constexpr (requires { Kernel::kF32Scales; }) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(rec) + 8 * half);
  } else {
    return load_f16x8(rec + 16 * half);
  }
}

// One 32-value block of a level kernel, in the form block_gemm runs.
template <class Kernel>
struct Block32 {
  static constexpr size_t kRecord = Kernel::kRecord;
  static constexpr int kBothHalvesColumns = both_halves_columns<Kernel>();
  static constexpr int64_t kValues = 32;
  static constexpr size_t kPrefetchAhead = kPrefetchDistance;
  template <int N>
  static void add(const uint8_t* rec, int half, int64_t b, const Column* x, __m256* acc) {
    const __m256 dw = block_scales<Kernel>(rec, half);
    // The block's term of column c's chain: acc += float(isum)·(d_w·d_x).
    const auto add_block = [&](int c, __m256i isum) {
      acc[c] =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dw, _mm256_set1_ps(x[c].d[b])), acc[c]);
    };
    if constexpr (requires { &Kernel::template isums<N>; }) {
      const int8_t* xq[N];
      for (int c = 0; c < N; ++c) xq[c] = x[c].q + 32 * b;
      __m256i isum[N];
      Kernel::template isums<N>(rec, half, xq, isum);
      for (int c = 0; c < N; ++c) add_block(c, isum[c]);
    } else {
      __m256i w[8];
      Kernel::levels(rec, half, w);
      for (int c = 0; c < N; ++c) {
        add_block(c, Kernel::isum(w, x[c].q + 32 * b, Kernel::kMinimum ? 0 : x[c].sums[b]));
        if constexpr (Kernel::kMinimum) {
          const __m256 m = load_f16x8(rec + 32 + 16 * half);
          acc[c] = _mm256_fmadd_ps(m, _mm256_set1_ps(reinterpret_cast<const float*>(x[c].sums)[b]), acc[c]);
        }
      }
    }
  }
};

}  // namespace

SINTER_DEFINE_ISA_GEMM(gemm_q4_0, block_gemm<Block32<Q4_0Kernel>>)
SINTER_DEFINE_ISA_GEMM(gemm_q4_1, block_gemm<Block32<Q4_1Kernel>>)
SINTER_DEFINE_ISA_GEMM(gemm_q5_0, block_gemm<Block32<Q5_0Kernel>>)
SINTER_DEFINE_ISA_GEMM(gemm_q5_1, block_gemm<Block32<Q5_1Kernel>>)
SINTER_DEFINE_ISA_GEMM(gemm_q8_0, block_gemm<Block32<Q8_0Kernel>>)
SINTER_DEFINE_ISA_GEMM(gemm_iq4_nl, block_gemm<Block32<IQ4_NLKernel>>)
SINTER_DEFINE_ISA_GEMM(gemm_mxfp4, block_gemm<Block32<MXFP4Kernel>>)

}  // namespace sinter::cpu::avx2
