// AVX-512 VNNI products of the 32-value block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4) with
// Q8_0/Q8_1 activation columns, on 16-row packed groups (docs/KERNELS.md).
//
// Per block, each row's 32 levels are 8 registers of unsigned bytes (4 per row lane); VPDPBUSD
// multiplies them with 4 broadcast activation bytes and sums into the row's int32 lane, starting
// from the column's precomputed offset sum (−8·Σx for Q4_0): the exact block integer sum of the
// reference. Then acc = fma(float(isum), d_w·d_x, acc), one chain per row and column.
#include "backend/cpu/avx512/avx512_common.h"

namespace sinter::cpu::avx512 {
namespace {

// Decoders: the 8 level registers (register i holds values 4i..4i+3 of each row) and the
// block's scale (and minimum) of one packed record.
struct Q4_0Decoder {
  static constexpr size_t kRecord = 288;
  static constexpr bool kMinimum = false;
  static void levels(const uint8_t* rec, __m512i* w) {
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int t = 0; t < 4; ++t) {
      const __m512i v = _mm512_loadu_si512(rec + 32 + 64 * t);
      w[t] = _mm512_and_si512(v, low);
      w[4 + t] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
    }
  }
};

struct IQ4_NLDecoder {
  static constexpr size_t kRecord = 288;
  static constexpr bool kMinimum = false;
  static void levels(const uint8_t* rec, __m512i* w) {
    // kvalues + 128 as unsigned bytes; the column's sums hold −128·Σx.
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, -127, -115, -103, -90, -75, -59, -39, -15));
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int t = 0; t < 4; ++t) {
      const __m512i v = _mm512_loadu_si512(rec + 32 + 64 * t);
      w[t] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low));
      w[4 + t] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
    }
  }
};

// MXFP4: the doubled E2M1 values + 128 as unsigned bytes (the column's sums hold −128·Σx); the
// scales are F32 (kernels_pack.cpp).
struct MXFP4Decoder {
  static constexpr size_t kRecord = 320;
  static constexpr bool kMinimum = false;
  static constexpr bool kF32Scales = true;
  static void levels(const uint8_t* rec, __m512i* w) {
    const __m512i table = _mm512_broadcast_i32x4(_mm_setr_epi8(-128, -127, -126, -125, -124, -122, -120, -116,
                                                               -128, 127, 126, 125, 124, 122, 120, 116));
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int t = 0; t < 4; ++t) {
      const __m512i v = _mm512_loadu_si512(rec + 64 + 64 * t);
      w[t] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low));
      w[4 + t] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
    }
  }
};

// The 16 rows' block scales of a record: F16, or F32 where the decoder says so.
template <class Decoder>
__m512 block_scales(const uint8_t* rec) {
  if constexpr (requires { Decoder::kF32Scales; }) {
    return _mm512_loadu_ps(rec);
  } else {
    return load_f16x16(rec);
  }
}

struct Q8_0Decoder {
  static constexpr size_t kRecord = 544;
  static constexpr bool kMinimum = false;
  static void levels(const uint8_t* rec, __m512i* w) {
    for (int t = 0; t < 8; ++t) w[t] = _mm512_loadu_si512(rec + 32 + 64 * t);
  }
};

struct Q4_1Decoder {
  static constexpr size_t kRecord = 320;
  static constexpr bool kMinimum = true;
  static void levels(const uint8_t* rec, __m512i* w) {
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int t = 0; t < 4; ++t) {
      const __m512i v = _mm512_loadu_si512(rec + 64 + 64 * t);
      w[t] = _mm512_and_si512(v, low);
      w[4 + t] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
    }
  }
};

// The fifth bits: byte j of register i (values 4i + j) gets bit 4i + j of the row's qh.
inline void add_fifth_bits(const uint8_t* qh_lanes, __m512i* w) {
  const __m512i qh = _mm512_loadu_si512(qh_lanes);
  const __m512i sixteen = _mm512_set1_epi8(16);
  for (int byte = 0; byte < 4; ++byte) {
    // Every byte of a lane takes byte `byte` of that lane's qh.
    const __m512i spread = _mm512_shuffle_epi8(
        qh, _mm512_broadcast_i32x4(_mm_setr_epi8(
                static_cast<char>(byte), static_cast<char>(byte), static_cast<char>(byte),
                static_cast<char>(byte), static_cast<char>(4 + byte), static_cast<char>(4 + byte),
                static_cast<char>(4 + byte), static_cast<char>(4 + byte), static_cast<char>(8 + byte),
                static_cast<char>(8 + byte), static_cast<char>(8 + byte), static_cast<char>(8 + byte),
                static_cast<char>(12 + byte), static_cast<char>(12 + byte), static_cast<char>(12 + byte),
                static_cast<char>(12 + byte))));
    for (int half = 0; half < 2; ++half) {
      const int i = 2 * byte + half;  // bits 4i..4i+3 = bits 4·half.. of byte `byte`
      const __m512i bits = _mm512_set1_epi32(static_cast<int32_t>(0x08040201u << (4 * half)));
      const __mmask64 set = _mm512_test_epi8_mask(spread, bits);
      w[i] = _mm512_mask_add_epi8(w[i], set, w[i], sixteen);
    }
  }
}

struct Q5_0Decoder {
  static constexpr size_t kRecord = 352;
  static constexpr bool kMinimum = false;
  static void levels(const uint8_t* rec, __m512i* w) {
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int t = 0; t < 4; ++t) {
      const __m512i v = _mm512_loadu_si512(rec + 96 + 64 * t);
      w[t] = _mm512_and_si512(v, low);
      w[4 + t] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
    }
    add_fifth_bits(rec + 32, w);
  }
};

struct Q5_1Decoder {
  static constexpr size_t kRecord = 384;
  static constexpr bool kMinimum = true;
  static void levels(const uint8_t* rec, __m512i* w) {
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int t = 0; t < 4; ++t) {
      const __m512i v = _mm512_loadu_si512(rec + 128 + 64 * t);
      w[t] = _mm512_and_si512(v, low);
      w[4 + t] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
    }
    add_fifth_bits(rec + 64, w);
  }
};

// 16 rows × N columns over all blocks of one group (N ≤ 8: the levels of a block unpacked once for
// 8 columns; docs/KERNELS.md "The op").
template <class Decoder, int N>
void tile(const uint8_t* group, int64_t blocks, const uint8_t* columns, const ColumnLayout& layout,
          float* dst, int64_t dst_stride, int lanes) {
  const uint8_t* col_base[N];
  for (int c = 0; c < N; ++c) col_base[c] = columns + static_cast<size_t>(c) * layout.bytes;
  __m512 acc[N];
  for (int c = 0; c < N; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* rec = group + static_cast<size_t>(b) * Decoder::kRecord;
    prefetch_lines(rec + kRecordPrefetchDistance, Decoder::kRecord);
    prefetch_lines<_MM_HINT_T1>(rec + kRecordPrefetchDistance + kL2PrefetchDistance, Decoder::kRecord);
    __m512i w[8];
    Decoder::levels(rec, w);
    const __m512 dw = block_scales<Decoder>(rec);
    for (int c = 0; c < N; ++c) {
      const Column x(col_base[c], layout);
      const int8_t* xq = x.q + 32 * b;
      __m512i s0 = Decoder::kMinimum ? _mm512_setzero_si512() : _mm512_set1_epi32(x.sums[b]);
      __m512i s1 = _mm512_setzero_si512();
      for (int i = 0; i < 8; i += 2) {
        s0 = _mm512_dpbusd_epi32(s0, w[i], broadcast_i32(xq + 4 * i));
        s1 = _mm512_dpbusd_epi32(s1, w[i + 1], broadcast_i32(xq + 4 * i + 4));
      }
      const __m512 dd = _mm512_mul_ps(dw, _mm512_set1_ps(x.d[b]));
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), dd, acc[c]);
      if constexpr (Decoder::kMinimum) {
        const __m512 m = load_f16x16(rec + 32);
        acc[c] = _mm512_fmadd_ps(m, _mm512_set1_ps(reinterpret_cast<const float*>(x.sums)[b]), acc[c]);
      }
    }
  }
  for (int c = 0; c < N; ++c) store_rows(dst + c * dst_stride, acc[c], lanes);
}

template <class Decoder>
void gemm(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
          const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride) {
  const int64_t blocks = w.n_in / 32;
  for (int64_t g = group_begin; g < group_end; ++g) {
    const uint8_t* group = w.data + static_cast<size_t>(g) * w.group_bytes;
    const int lanes = static_cast<int>(min64(kGroupRows, w.n_out - g * kGroupRows));
    over_columns<8>(column_count, [&]<int N>(int64_t c) {
      tile<Decoder, N>(group, blocks, columns + static_cast<size_t>(c) * layout.bytes, layout,
                       dst + c * dst_stride + g * kGroupRows, dst_stride, lanes);
    });
  }
}

}  // namespace

SINTER_DEFINE_ISA_GEMM(gemm_q4_0, gemm<Q4_0Decoder>)
SINTER_DEFINE_ISA_GEMM(gemm_q4_1, gemm<Q4_1Decoder>)
SINTER_DEFINE_ISA_GEMM(gemm_q5_0, gemm<Q5_0Decoder>)
SINTER_DEFINE_ISA_GEMM(gemm_q5_1, gemm<Q5_1Decoder>)
SINTER_DEFINE_ISA_GEMM(gemm_q8_0, gemm<Q8_0Decoder>)
SINTER_DEFINE_ISA_GEMM(gemm_iq4_nl, gemm<IQ4_NLDecoder>)
SINTER_DEFINE_ISA_GEMM(gemm_mxfp4, gemm<MXFP4Decoder>)

}  // namespace sinter::cpu::avx512
