// AVX2 products of F32, F16 and BF16 weights (packed [k][16 rows], read as two halves of 8 rows)
// with F32 columns. One fma chain per row and column in k order: the reference's reduction.
#include "backend/cpu/avx2/avx2_common.h"

namespace sinter::cpu::avx2 {
namespace {

struct F32Rows {
  static constexpr size_t kBytes = 64;  // per k, 16 rows
  static __m256 load(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static constexpr size_t kHalf = 32;
};
struct F16Rows {
  static constexpr size_t kBytes = 32;
  static __m256 load(const uint8_t* p) { return load_f16x8(p); }
  static constexpr size_t kHalf = 16;
};
struct BF16Rows {
  static constexpr size_t kBytes = 32;
  static __m256 load(const uint8_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static constexpr size_t kHalf = 16;
};

// Generation: G groups (both halves of each: 16·G rows) × 1 column, over k in order. Out of line
// and fully unrolled for the reason given at columns_tile below (inlined, gcc stored all 2G
// accumulators to the stack on every k).
template <class Rows, int G>
[[gnu::noinline]] void groups_column(const PackedMatrix& w, int64_t g0, const uint8_t* column, float* dst) {
  const uint8_t* groups[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) groups[g] = w.data + static_cast<size_t>(g0 + g) * w.group_bytes;
  const auto* x = reinterpret_cast<const float*>(column);
  __m256 acc0[G], acc1[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) acc0[g] = acc1[g] = _mm256_setzero_ps();
  for (int64_t k = 0; k < w.n_in; ++k) {
    const __m256 xk = _mm256_broadcast_ss(x + k);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      const uint8_t* p = groups[g] + static_cast<size_t>(k) * Rows::kBytes;
      if (k % (64 / Rows::kBytes) == 0) prefetch_lines(p + kPrefetchDistance, 64);
      acc0[g] = _mm256_fmadd_ps(Rows::load(p), xk, acc0[g]);
      acc1[g] = _mm256_fmadd_ps(Rows::load(p + Rows::kHalf), xk, acc1[g]);
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    const int lanes = static_cast<int>(min64(kGroupRows, w.n_out - (g0 + g) * kGroupRows));
    store_rows(dst + (g0 + g) * kGroupRows, acc0[g], lanes);
    store_rows(dst + (g0 + g) * kGroupRows + 8, acc1[g], lanes - 8);
  }
}

// Prompts: one group (16 rows: two halves) × N columns, the columns `x_stride` bytes apart.
// 2N accumulators, two weight registers and one broadcast: 2N + 3 of the 16 ymm registers. Kept
// out of line so that the compiler cannot hoist the tail masks of the stores, or anything else
// of the caller, into registers across the k loop (that spilled a weight register and the loop
// counter to the stack: half the FMA peak).
template <class Rows, int N>
[[gnu::noinline]] void columns_tile(const uint8_t* group, int64_t n_in, const uint8_t* columns,
                                    size_t x_stride, float* out, int64_t dst_stride, int lanes) {
  __m256 acc0[N], acc1[N];
#pragma GCC unroll 8
  for (int c = 0; c < N; ++c) acc0[c] = acc1[c] = _mm256_setzero_ps();
  const float* x[N];
#pragma GCC unroll 8
  for (int c = 0; c < N; ++c) x[c] = reinterpret_cast<const float*>(columns + c * x_stride);
  const uint8_t* p = group;
  for (int64_t k = 0; k < n_in; ++k, p += Rows::kBytes) {
    const __m256 w0 = Rows::load(p), w1 = Rows::load(p + Rows::kHalf);
#pragma GCC unroll 8
    for (int c = 0; c < N; ++c) {
      const __m256 xk = _mm256_broadcast_ss(x[c] + k);
      acc0[c] = _mm256_fmadd_ps(w0, xk, acc0[c]);
      acc1[c] = _mm256_fmadd_ps(w1, xk, acc1[c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < N; ++c) {
    store_rows(out + c * dst_stride, acc0[c], lanes);
    store_rows(out + c * dst_stride + 8, acc1[c], lanes - 8);
  }
}

template <class Rows>
void gemm(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
          const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride) {
  // Generation (one column) streams weights: with one group, the fma chains of its two halves
  // leave the FMA units waiting on their latency; four groups give eight independent chains.
  // Prompts reuse each weight load across columns: one group by six columns.
  int64_t g = group_begin;
  if (column_count == 1) {
    for (; g + 4 <= group_end; g += 4) groups_column<Rows, 4>(w, g, columns, dst);
    for (; g < group_end; ++g) groups_column<Rows, 1>(w, g, columns, dst);
    return;
  }
  for (; g < group_end; ++g) {
    const uint8_t* group = w.data + static_cast<size_t>(g) * w.group_bytes;
    const int lanes = static_cast<int>(min64(kGroupRows, w.n_out - g * kGroupRows));
    float* out = dst + g * kGroupRows;
    over_columns<6>(column_count, [&]<int N>(int64_t c) {
      columns_tile<Rows, N>(group, w.n_in, columns + static_cast<size_t>(c) * layout.bytes, layout.bytes,
                            out + c * dst_stride, dst_stride, lanes);
    });
  }
}

}  // namespace

void gemm_f32(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
              int64_t m, float* dst, int64_t stride) {
  gemm<F32Rows>(w, gb, ge, x, l, m, dst, stride);
}
void gemm_f16(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
              int64_t m, float* dst, int64_t stride) {
  gemm<F16Rows>(w, gb, ge, x, l, m, dst, stride);
}
void gemm_bf16(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
               int64_t m, float* dst, int64_t stride) {
  gemm<BF16Rows>(w, gb, ge, x, l, m, dst, stride);
}

}  // namespace sinter::cpu::avx2
